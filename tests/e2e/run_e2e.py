"""Runs every tests/e2e/test_*.py (unittest) against $ARGUSQ and prints
one line "e2e: N passed, N failed" at the end."""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
failed = len(result.failures) + len(result.errors)
print(f"e2e: {result.testsRun - failed} passed, {failed} failed")
sys.exit(1 if failed or result.testsRun == 0 else 0)
