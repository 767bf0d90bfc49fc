"""What the tests under tests/py share, imported as `support.<module>` (pytest puts tests/py on the
import path through conftest.py, which keeps only pytest's hooks and fixtures). No test imports another
test or conftest.py.

  paths.py               ROOT, and STUBS: the stubs the tests build (a handout's copy in a handout)
  gpu.py                 HAS_GPU, the `gpu` marker, the wait for the GPU unit tests' lock
  reports.py             making a lab report: make_report, the render tools, a fake grader, measured results
  staff_class.py         a synthetic class for the staff tools' tests (hand-ins, plans, grades)
  cluster_helpers.py     the cluster tests' throw-away course, class, stand-ins and waits
  private_accounts.py    Unix accounts that exist only in the test's private mount namespace
  browser.py             headless Chromium for the staff pages' tests
  broken_submissions.py  the deliberately broken submissions and what each must be graded
  gpu_prebuild.py        the GPU tests' builds, started in the background

The first three ship in a handout with the tests that import them (SHIP in
grader/scripts/handout/handout_files.py; tests/py/handout/test_handout_contents.py checks that SHIP
names every support module a shipped test imports, and no other); the rest never ship."""
