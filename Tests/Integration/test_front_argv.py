"""The front hands the full program the very argv it was started with (interface.md §1: same pid,
same argv): bytes that are not UTF-8 included, which a round trip through Swift Strings replaces
with U+FFFD (a `--config` path, an `exec` command's arguments, an account name in Latin-1)."""
import subprocess
import unittest

from harness import TOKENBROKER, BrokerTestCase


class FrontArgvTest(BrokerTestCase):

    def test_the_full_program_gets_the_argv_bytes_as_given(self):
        # `exec` runs in tokenbroker-core, in the front's process: its child reads the argv the
        # core was started with from /proc (the child's own arguments are the core's business).
        probe = [b"sh", b"-c", b'cat "/proc/$PPID/cmdline"', b"sh"]
        odd = [b"latin1-caf\xe9", b"\xff\xfe", b"", b"with space", b"\xc3"]
        argv = [TOKENBROKER.encode(), b"exec", b"work", b"--"] + probe + odd
        r = subprocess.run(argv, capture_output=True, env=self.env(), timeout=60, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(b"\0")[1:-1], argv[1:])


if __name__ == "__main__":
    unittest.main()
