"""The front hands the full program the very argv it was started with (interface.md §1: same pid,
same argv): bytes that are not UTF-8 included, which a round trip through Swift Strings replaces
with U+FFFD (a `--config` path, an `exec` command's arguments, an account name in Latin-1)."""
import ctypes
import os
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

    def test_a_start_with_no_argv_at_all_is_a_usage_error(self):
        # execve(path, {NULL}, envp): argc 0, which Python's os.execve refuses to make. The front
        # reads argc and argv as glibc hands them to its start code (CFrontStart), not by walking
        # the stack back from `environ`, so it sees no command and says so.
        libc = ctypes.CDLL(None, use_errno=True)
        argv = (ctypes.c_char_p * 1)(None)
        env = [f"{k}={v}".encode() for k, v in self.env().items()] + [None]
        envp = (ctypes.c_char_p * len(env))(*env)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.dup2(w, 2)
            os.dup2(os.open(os.devnull, os.O_RDWR), 0)
            libc.execve(TOKENBROKER.encode(), argv, envp)
            os._exit(127)
        os.close(w)
        with os.fdopen(r, "rb") as err:
            stderr = err.read()
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 64, stderr)
        self.assertIn(b"usage: tokenbroker", stderr)


if __name__ == "__main__":
    unittest.main()
