"""Runs the package tests (Tests/Package) and ends with the closing line 'N passed, N failed',
counting each check (a subTest) of the install-use-purge scenario."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


class CountingResult(unittest.TextTestResult):
    """Counts subtests as checks: the scenario is one test of several checks."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.checks_passed = self.checks_failed = 0

    def addSubTest(self, test, subtest, outcome):
        super().addSubTest(test, subtest, outcome)
        if outcome is None:
            self.checks_passed += 1
            self.stream.writeln("  ok: %s" % subtest._message)
        else:
            self.checks_failed += 1


suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py")
result = unittest.TextTestRunner(verbosity=2, resultclass=CountingResult).run(suite)
failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
skipped = len(result.skipped)
passed = result.checks_passed
if failed == 0 and skipped == 0 and result.checks_failed == 0:
    passed = max(passed, result.testsRun)
print("package: %d passed, %d failed, %d skipped" % (passed, max(failed, result.checks_failed), skipped))
sys.exit(1 if failed or result.testsRun == 0 else 0)
