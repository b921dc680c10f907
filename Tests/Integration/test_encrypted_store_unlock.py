"""bug-cases-3.md X17 on the real binaries: `unlock` is bounded and anchored to the caller's store.
No terminal is refused at once (no /dev/tty); an agent that cannot start is found before the
passphrase is read; `--passphrase-fd` creates a store only with `--create` (a terminal still
creates one after asking the new passphrase twice); an agent started with another XDG_DATA_HOME
is named with both paths rather than served; `accounts` says which store it found missing or
locked; two creations at once leave one store."""
import fcntl
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import sodium_file
from harness import TOKENBROKER
from test_encrypted_store import PASSPHRASE, EncryptedStoreCase
from test_encrypted_store_memory import wait_blocked_on_pipe


def pending(fd):
    """What is still unread in the pipe whose read end is `fd` (without blocking)."""
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return b""
    finally:
        fcntl.fcntl(fd, fcntl.F_SETFL, flags)


class X17UnlockTest(EncryptedStoreCase):

    def test_X17_no_terminal_exits_at_once_without_opening_dev_tty(self):
        started = time.time()
        r = subprocess.run(["setsid", TOKENBROKER, "unlock"], stdin=subprocess.DEVNULL, capture_output=True,
                           env=self.env(), timeout=30)
        self.assertLess(time.time() - started, 1.0)
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn(b"no terminal; use --passphrase-fd", r.stderr)
        self.assertIsNone(self.agent_pid(), "nothing was started")
        self.assertFalse(os.path.exists(self.store_path))
        if not shutil.which("strace"):
            self.skipTest("strace is not installed: /dev/tty not checked")
        log = os.path.join(self.tmp, "strace.log")
        t = subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", log, "setsid", TOKENBROKER,
                            "unlock"], stdin=subprocess.DEVNULL, capture_output=True, env=self.env(), timeout=30)
        if not os.path.exists(log) or b"ptrace" in t.stderr:
            self.skipTest("strace cannot trace here (%s)" % t.stderr.decode().strip())
        self.assertEqual(t.returncode, 64, t.stderr)
        with open(log) as f:
            opened = f.read()
        self.assertIn("openat(", opened, "strace saw the opens")
        self.assertNotIn("/dev/tty", opened)

    def test_X17_an_agent_that_cannot_start_fails_before_the_passphrase_is_read(self):
        socket_dir = os.path.join(self.runtime, "tokenbroker")
        os.mkdir(socket_dir, 0o500)  # read-only: the agent cannot bind its socket there
        self.addCleanup(os.chmod, socket_dir, 0o700)
        prefix = []
        if os.getuid() == 0:  # root writes anywhere unless it gives up CAP_DAC_OVERRIDE
            if not shutil.which("setpriv"):
                self.skipTest("running as root without setpriv (util-linux) to drop CAP_DAC_OVERRIDE")
            prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                      "--inh-caps=-dac_override,-dac_read_search"]
        for create in ([], ["--create"]):
            with self.subTest(create=create):
                read_end, write_end = os.pipe()
                os.write(write_end, PASSPHRASE + b"\n")
                r = subprocess.run(prefix + [TOKENBROKER, "unlock", "--passphrase-fd", str(read_end)] + create,
                                   pass_fds=(read_end,), stdin=subprocess.DEVNULL, capture_output=True,
                                   env=self.env(), timeout=60)
                os.close(write_end)
                self.assertNotEqual(r.returncode, 0, r.stderr)
                self.assertIn(b"agent", r.stderr)
                self.assertEqual(pending(read_end), PASSPHRASE + b"\n", "the passphrase was never read")
                os.close(read_end)
                self.assertFalse(os.path.exists(self.store_path))

    def test_X17_passphrase_fd_creates_a_store_only_with_create(self):
        read_end, write_end = os.pipe()
        os.write(write_end, PASSPHRASE + b"\n")
        r = subprocess.run([TOKENBROKER, "unlock", "--passphrase-fd", str(read_end)], pass_fds=(read_end,),
                           stdin=subprocess.DEVNULL, capture_output=True, env=self.env(), timeout=60)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(self.store_path.encode(), r.stderr)
        self.assertIn(b"--create", r.stderr)
        self.assertEqual(pending(read_end), PASSPHRASE + b"\n", "refused before the passphrase was read")
        os.close(read_end)
        os.close(write_end)
        self.assertFalse(os.path.exists(self.store_path))
        r = self.unlock(create=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"created the encrypted token store", r.stderr)
        self.assertEqual(sodium_file.items(PASSPHRASE, self.store_path), {})
        # An existing store: --create unlocks it as it is, and a wrong passphrase changes nothing.
        self.assertEqual(self.run_broker("lock").returncode, 0)
        before = self.store_bytes()
        r = self.unlock(create=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"created", r.stderr)
        r = self.unlock(b"another passphrase", create=True)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b"wrong passphrase", r.stderr)
        self.assertEqual(self.store_bytes(), before)

    def start_agent_with_data_home(self, data_home):
        r = self.run_broker("agent", "start", env=self.env(XDG_DATA_HOME=data_home))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_X17_an_agent_of_another_data_home_is_named_and_nothing_is_created(self):
        other = tempfile.mkdtemp(prefix="A-", dir=self.tmp)  # the agent's XDG_DATA_HOME
        agent_store = os.path.join(other, "tokenbroker", "tokens.enc")
        self.start_agent_with_data_home(other)
        for create in (False, True):
            with self.subTest(create=create):
                r = self.unlock(create=create)
                self.assertEqual(r.returncode, 5, r.stderr)
                self.assertIn(self.store_path.encode(), r.stderr)
                self.assertIn(agent_store.encode(), r.stderr)
                self.assertIn(b"XDG_DATA_HOME", r.stderr)
                self.assertIn(b"tokenbroker agent stop", r.stderr)
                self.assertNotIn(b"remove it", r.stderr)
                self.assertEqual(r.stderr.count(b"\n"), 1, r.stderr)
                self.assertFalse(os.path.exists(self.store_path))
                self.assertFalse(os.path.exists(agent_store), "no empty store where the agent looks")

    def test_X17_accounts_reports_the_store_missing_or_locked_at_the_path_it_checked(self):
        # No store and no agent.
        r = self.run_broker("accounts")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertEqual(r.stdout, b"work\tazure\tstore missing\n")
        self.assertIn(self.store_path.encode(), r.stderr)
        self.assertIn(b"--create", r.stderr)
        self.assertNotIn(b"not signed in", r.stdout + r.stderr)
        r = self.run_broker("accounts", "--json")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b'"store":"missing"', r.stdout)
        # An agent started with another XDG_DATA_HOME: the caller's store is named, and the agent's.
        other = tempfile.mkdtemp(prefix="A-", dir=self.tmp)
        self.start_agent_with_data_home(other)
        r = self.run_broker("accounts")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertEqual(r.stdout, b"work\tazure\tstore missing\n")
        self.assertIn(self.store_path.encode(), r.stderr)
        self.assertIn(os.path.join(other, "tokenbroker", "tokens.enc").encode(), r.stderr)
        self.assertNotIn(b"not signed in", r.stdout + r.stderr)
        # The caller's store exists, the agent serves the other one: locked, as far as this caller goes.
        self.kill_agent()
        self.assertEqual(self.unlock(create=True).returncode, 0)
        self.kill_agent()
        self.start_agent_with_data_home(other)
        r = self.run_broker("accounts")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertEqual(r.stdout, b"work\tazure\tstore locked\n")
        self.assertIn(self.store_path.encode(), r.stderr)

    def test_X17_two_creations_at_once_leave_exactly_one_store(self):
        passphrases = (b"first passphrase 1111", b"second passphrase 2222")
        for round_ in range(3):
            with self.subTest(round=round_):
                self.kill_agent()
                if os.path.exists(self.store_path):
                    os.unlink(self.store_path)
                self.assertEqual(self.run_broker("agent", "start").returncode, 0)
                procs, writers = [], []
                for _ in passphrases:
                    read_end, write_end = os.pipe()
                    procs.append(subprocess.Popen(
                        [TOKENBROKER, "unlock", "--create", "--passphrase-fd", str(read_end)], pass_fds=(read_end,),
                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env()))
                    os.close(read_end)
                    writers.append(write_end)
                for p in procs:  # both found no store and wait for their passphrases
                    self.assertTrue(wait_blocked_on_pipe(p.pid), "unlock waits for its passphrase")
                for w, passphrase in zip(writers, passphrases):
                    os.write(w, passphrase + b"\n")
                    os.close(w)
                results = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
                codes = sorted(rc for _, _, rc in results)
                self.assertEqual(codes, [0, 5], results)
                winner = [i for i, (_, _, rc) in enumerate(results) if rc == 0][0]
                loser_err = results[1 - winner][1]
                self.assertIn(b"a store was created meanwhile; unlock again", loser_err)
                self.assertNotIn(b"restore it from a backup", loser_err)
                data = self.store_bytes()
                self.assertIsNotNone(sodium_file.decrypt(passphrases[winner], data))
                self.assertIsNone(sodium_file.decrypt(passphrases[1 - winner], data))
                self.assertEqual(self.run_broker("accounts").returncode, 0, "the winner's key is held")


if __name__ == "__main__":
    unittest.main()
