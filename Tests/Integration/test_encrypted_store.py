"""`store = encrypted-file` (interface.md §7.1) on the real file and the real agent, with
no Secret Service in the session at all: create, unlock, login, token get, lock, an agent restart,
a wrong passphrase, a damaged file, `agent = off`, and what never appears where. The file is read
back with libsodium itself (sodium_file.py), not with tokenbroker's code."""
import os
import pty
import select
import stat
import subprocess
import time
import unittest

import sodium_file
from harness import TOKENBROKER, BrokerTestCase

PASSPHRASE = b"correct horse battery staple 7c1f"
UNLOCK_HINT = b"tokenbroker unlock"
GIT_GET = "protocol=https\nhost=git.example.test\n\n"


class EncryptedStoreCase(BrokerTestCase):
    keyring = False  # a headless machine: nothing answers on the Secret Service name
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config(extra_broker="store = encrypted-file\n"))

    @property
    def store_path(self):
        return os.path.join(self.home, ".local", "share", "tokenbroker", "tokens.enc")

    def store_bytes(self):
        with open(self.store_path, "rb") as f:
            return f.read()

    def unlock(self, passphrase=PASSPHRASE, create=False, **kw):
        """`unlock --passphrase-fd 0`; `create`: with `--create` (needed to make a new store)."""
        args = ["unlock", "--passphrase-fd", "0"] + (["--create"] if create else [])
        return self.run_broker(*args, input=passphrase + b"\n", **kw)

    def assert_locked(self, r):
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b"is locked; run 'tokenbroker unlock'", r.stderr)
        self.assertNotIn(b"not signed in", r.stderr)

    def signed_in(self):
        r = self.unlock(create=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)
        return sodium_file.items(PASSPHRASE, self.store_path)["refresh-token:work"]["refresh_token"]

    def newest_refresh_token(self):
        tokens = list(self.emu.store.refresh_tokens.values())
        return max(tokens, key=lambda t: t.created).token


class LifecycleTest(EncryptedStoreCase):

    def assert_missing(self, r):
        """No store yet: exit 5 naming the file and `unlock --create` (bug-cases-3.md X17)."""
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b"there is no encrypted token store at " + self.store_path.encode(), r.stderr)
        self.assertIn(b"tokenbroker unlock --create", r.stderr)
        self.assertNotIn(b"not signed in", r.stdout + r.stderr)

    def test_create_unlock_login_get_lock_and_restart(self):
        self.assert_missing(self.run_broker("token", "get", "work"))
        accounts = self.run_broker("accounts")
        self.assert_missing(accounts)
        self.assertIn(b"work\tazure\tstore missing", accounts.stdout)
        self.assertFalse(os.path.exists(self.store_path))

        started = time.time()
        r = self.unlock(create=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(time.time() - started, 30)
        self.assertIn(b"created the encrypted token store", r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(self.store_path).st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(self.store_path)).st_mode), 0o700)
        version, kdf, ops, mem, _, aead, _ = sodium_file.header(self.store_bytes())
        self.assertEqual((version, kdf, ops, mem, aead), (1, 2, 2, 64 << 20, 1))
        self.assertEqual(sodium_file.items(PASSPHRASE, self.store_path), {})

        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)
        got = self.run_broker("token", "get", "work")
        self.assertEqual(got.returncode, 0, got.stderr)
        access = got.stdout.decode().strip()
        self.assertTrue(self.emu.validate_access_token(access))
        git = self.run_broker("get", input=GIT_GET)
        self.assertEqual(git.returncode, 0, git.stderr)

        data = self.store_bytes()
        items = sodium_file.items(PASSPHRASE, self.store_path)
        refresh = items["refresh-token:work"]["refresh_token"]
        self.assertEqual(refresh, self.newest_refresh_token())
        for secret in (refresh, access):
            self.assertNotIn(secret.encode(), data)
        self.assertNotIn(sodium_file.derive(PASSPHRASE, data), data)
        self.assertNotIn(PASSPHRASE, data)
        self.assertNotIn(b"work", data)

        self.assertEqual(self.run_broker("lock").returncode, 0)
        self.assert_locked(self.run_broker("token", "get", "work"))
        git = self.run_broker("get", input=GIT_GET)
        self.assert_locked(git)
        self.assertEqual(git.stdout, b"")
        self.assertEqual(self.store_bytes(), data)

        self.assertEqual(self.unlock().returncode, 0)
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)
        self.kill_agent()  # SIGKILL: its socket stays behind, refusing
        self.assert_locked(self.run_broker("accounts"))  # the full program, no agent: locked
        self.assert_locked(self.run_broker("token", "get", "work"))  # a new agent holds no key
        self.assertIn(b"store locked", self.run_broker("accounts").stdout)

    def test_no_idle_exit_while_unlocked(self):
        self.write_config(self.default_config(extra_broker="store = encrypted-file\nagent-idle-timeout = 1\n"))
        self.assertEqual(self.unlock(create=True).returncode, 0)
        pid = self.agent_pid()
        self.assertIsNotNone(pid)
        time.sleep(3)
        self.assertEqual(self.agent_pid(), pid, "the unlocked agent stayed")
        self.assertEqual(self.run_broker("lock").returncode, 0)
        deadline = time.time() + 30
        while self.agent_pid() is not None and time.time() < deadline:
            time.sleep(0.1)
        self.assertIsNone(self.agent_pid(), "locked, it idles out again")

    def test_wrong_passphrase_changes_nothing(self):
        self.signed_in()
        self.kill_agent()
        before = self.store_bytes()
        r = self.unlock(b"not the passphrase")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b"wrong passphrase", r.stderr)
        self.assertIn(self.store_path.encode(), r.stderr)
        self.assertEqual(self.store_bytes(), before)
        self.assert_locked(self.run_broker("token", "get", "work"))
        self.assertEqual(self.unlock().returncode, 0)
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)

    def test_damaged_file_is_named_and_never_overwritten(self):
        self.signed_in()
        good = self.store_bytes()
        for name, damaged in (("flipped", good[:-20] + bytes([good[-20] ^ 1]) + good[-19:]),
                              ("truncated", good[:70])):
            with self.subTest(damage=name):
                with open(self.store_path, "wb") as f:
                    f.write(damaged)
                # Unlocked: a refresh that would rewrite the file fails and names it.
                r = self.run_broker("token", "get", "work", "--force-refresh")
                self.assertEqual(r.returncode, 5, r.stderr)
                self.assertIn(self.store_path.encode(), r.stderr)
                self.assertEqual(self.store_bytes(), damaged)
                # After a restart: unlock fails, names it, and creates nothing in its place.
                self.kill_agent()
                r = self.unlock()
                self.assertEqual(r.returncode, 5, r.stderr)
                self.assertIn(self.store_path.encode(), r.stderr)
                self.assertEqual(self.store_bytes(), damaged)
                with open(self.store_path, "wb") as f:
                    f.write(good)
                self.assertEqual(self.unlock().returncode, 0)
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)

    def test_agent_off_is_a_configuration_error(self):
        self.write_config(self.default_config(extra_broker="store = encrypted-file\nagent = off\n"))
        for args in (("token", "get", "work"), ("unlock", "--passphrase-fd", "0"), ("accounts",), ("get",)):
            with self.subTest(args=args):
                r = self.run_broker(*args, input=GIT_GET if args == ("get",) else PASSPHRASE + b"\n")
                self.assertEqual(r.returncode, 64, r.stderr)
                self.assertIn(b"agent = auto", r.stderr)
        self.assertFalse(os.path.exists(self.store_path))

    def test_no_secret_service_names_the_encrypted_file_store(self):
        self.write_config(self.default_config())  # store = secret-service, and no daemon runs
        r = self.run_broker("login", "work", "--device-code")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b"store = encrypted-file", r.stderr)
        self.assertIn(b"tokenbroker unlock", r.stderr)

    def test_unlock_without_a_terminal_or_descriptor_is_a_usage_error(self):
        r = self.run_broker("unlock")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn(b"--passphrase-fd", r.stderr)


class TerminalTest(EncryptedStoreCase):

    def run_on_pty(self, args, answers, approve=False):
        """Runs tokenbroker ARGS with a pseudo-terminal as stdin and stderr, typing each answer
        when its prompt appears."""
        master, slave = pty.openpty()
        p = subprocess.Popen([TOKENBROKER] + args, stdin=slave, stdout=subprocess.PIPE, stderr=slave, env=self.env())
        os.close(slave)
        text, pending = "", list(answers)
        deadline = time.time() + 60
        while p.poll() is None and time.time() < deadline:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    text += os.read(master, 65536).decode(errors="replace")
                except OSError:
                    break
            if pending and text.count("(not shown)") + text.count("again:") > len(answers) - len(pending):
                os.write(master, pending.pop(0) + b"\n")
            if approve and "enter the code" in text:
                approve = False
                self.emu_approve_when_pending()
        out, _ = p.communicate(timeout=60)
        os.close(master)
        return p.returncode, out, text

    def test_login_on_a_terminal_creates_then_unlocks_the_store(self):
        rc, out, text = self.run_on_pty(["login", "work", "--device-code"], [PASSPHRASE, PASSPHRASE], approve=True)
        self.assertEqual(rc, 0, text)
        self.assertIn(b"signed in to work", out)
        self.assertIn("new passphrase", text)
        self.assertNotIn(PASSPHRASE.decode(), text)  # echo was off
        self.assertIn("refresh-token:work", sodium_file.items(PASSPHRASE, self.store_path))
        self.assertEqual(self.run_broker("lock").returncode, 0)
        rc, out, text = self.run_on_pty(["login", "work", "--device-code"], [PASSPHRASE], approve=True)
        self.assertEqual(rc, 0, text)
        self.assertEqual(text.count("(not shown)"), 1)

    def test_mistyped_confirmation_creates_nothing(self):
        rc, _, text = self.run_on_pty(["unlock"], [PASSPHRASE, b"something else"])
        self.assertEqual(rc, 1, text)
        self.assertIn("differ", text)
        self.assertFalse(os.path.exists(self.store_path))


if __name__ == "__main__":
    unittest.main()
