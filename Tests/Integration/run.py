"""Runs every integration test and ends with the closing line 'N passed, N failed'."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

pattern = sys.argv[1] if len(sys.argv) > 1 else "test_*.py"
suite = unittest.defaultTestLoader.discover(HERE, pattern=pattern)
result = unittest.TextTestRunner(verbosity=2).run(suite)
failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
passed = result.testsRun - failed - len(result.skipped)
print("integration: %d passed, %d failed, %d skipped" % (passed, failed, len(result.skipped)))
sys.exit(1 if failed or result.testsRun == 0 else 0)
