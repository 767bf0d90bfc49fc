"""What the tests under tests/py share, imported as `support.<module>` (pytest puts tests/py on the
import path through conftest.py, which keeps only pytest's hooks and fixtures). What ships in a
handout with the tests that import it is named in SHIP (grader/scripts/handout/handout_files.py)."""
