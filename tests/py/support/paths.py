"""Where the tests find the repository and the stubs they build."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# The stubs as handed out, which the tests build and break: student/ in the instructor repository; in a
# handout, student/ is the student's own work and make handout keeps a copy of the stubs in
# tests/stubs/student/ (the Makefile's TEST_STUBS, which make test builds), so that the tests pass
# whatever the student has written.
STUBS = ROOT / "tests" / "stubs" / "student" if (ROOT / "tests" / "stubs" / "student").is_dir() else ROOT / "student"
