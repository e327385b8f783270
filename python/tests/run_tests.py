"""Runs every python/tests/test_*.py (unittest) against libargusq
($ARGUSQ_LIB, else the checkout's build/libargusq.so) and prints one line
"python: N passed, N failed" at the end (tests/run.sh counts it)."""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))  # the package of this checkout
sys.path.insert(0, here)


def main():
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors)
    print(f"python: {result.testsRun - failed} passed, {failed} failed")
    return 1 if failed or result.testsRun == 0 else 0


# guarded: Dask's worker processes (the fleet tests) start by importing
# the main module again
if __name__ == "__main__":
    sys.exit(main())
