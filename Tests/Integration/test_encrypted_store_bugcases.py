"""bug-cases-3.md X16 on the real agent and the emulator over HTTPS with strict rotation (a
redeemed refresh token presented again is `invalid_grant`): the key is not dropped by
`unlock-timeout`, `tokenbroker lock` or `agent stop` while a refresh is on its way, so the rotated
refresh token is always written (and a refresh that would start after the drop never reaches the
provider). Refreshes run inside the agent (`token get`, which the front routes there) and in the
full program outside it (`token get … --`, which the front does not route: its store calls go to
the agent one by one)."""
import subprocess
import time
import unittest

import sodium_file
from harness import TOKENBROKER
from test_encrypted_store import PASSPHRASE, EncryptedStoreCase

HOLD = 4  # seconds the emulator holds each refresh reply


class X16RotationVersusLockTest(EncryptedStoreCase):
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "reject"}

    def setUp(self):
        super().setUp()
        self.signed_in()

    def config(self, unlock_timeout):
        self.write_config(self.default_config(
            extra_broker="store = encrypted-file\nunlock-timeout = %d\n" % unlock_timeout))

    def start_refresh(self, front=False):
        """A forced refresh whose reply the emulator holds HOLD seconds (the provider has redeemed
        the old refresh token by the time it answers)."""
        self.emu.add_fault("delay", "token", seconds=HOLD, grant_type="refresh_token")
        args = ["token", "get", "work", "--force-refresh"] + (["--"] if front else [])
        return subprocess.Popen([TOKENBROKER] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env())

    def assert_refreshed(self, p):
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        self.assertTrue(self.emu.validate_access_token(out.decode().strip()))
        stored = sodium_file.items(PASSPHRASE, self.store_path)["refresh-token:work"]["refresh_token"]
        self.assertEqual(stored, self.newest_refresh_token(), "the rotated refresh token was written")
        return err

    def assert_next_refresh_works(self):
        """After a new unlock the next refresh redeems the stored (newest) token: with strict
        rotation a lost one would be answered invalid_grant and the account signed out."""
        self.emu.clear_faults()
        self.assertEqual(self.unlock().returncode, 0)
        r = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.emu.requests(grant_type="refresh_token")[-1]["status"], 200)

    def test_X16_unlock_timeout_during_a_refresh_waits_for_the_write(self):
        for front in (False, True):
            with self.subTest(front=front):
                self.config(3)
                self.assertEqual(self.run_broker("lock").returncode, 0)
                self.assertEqual(self.unlock().returncode, 0)
                started = time.time()
                p = self.start_refresh(front)
                self.assert_refreshed(p)
                self.assertGreater(time.time() - started, 3, "the timeout passed during the refresh")
                deadline = time.time() + 10
                r = self.run_broker("token", "get", "work")
                while r.returncode == 0 and time.time() < deadline:
                    time.sleep(0.2)
                    r = self.run_broker("token", "get", "work")
                self.assert_locked(r)  # dropped after the write
                self.config(0)
                self.assert_next_refresh_works()

    def test_X16_lock_during_a_refresh_completes_after_the_write(self):
        for front in (False, True):
            with self.subTest(front=front):
                p = self.start_refresh(front)
                time.sleep(1)
                started = time.time()
                lock = self.run_broker("lock", timeout=150)
                self.assertEqual(lock.returncode, 0, lock.stderr)
                self.assertGreater(time.time() - started, HOLD - 2, "lock waited for the refresh")
                self.assertLess(time.time() - started, 60)
                self.assert_refreshed(p)
                self.assert_locked(self.run_broker("token", "get", "work"))
                self.assert_next_refresh_works()

    def test_X16_agent_stop_during_a_refresh_writes_first(self):
        for front in (False, True):
            with self.subTest(front=front):
                p = self.start_refresh(front)
                time.sleep(1)
                pid = self.agent_pid()
                stop = self.run_broker("agent", "stop", timeout=150)
                self.assertEqual(stop.returncode, 0, stop.stderr)
                self.assert_refreshed(p)
                self.assertFalse(pid is not None and self.agent_pid() == pid, "the agent exited")
                self.assert_locked(self.run_broker("token", "get", "work"))  # a new agent holds no key
                self.assert_next_refresh_works()

    def test_X16_locked_store_sends_no_refresh(self):
        self.assertEqual(self.run_broker("lock").returncode, 0)
        before = len(self.emu.requests(grant_type="refresh_token"))
        for args in (("token", "get", "work"), ("token", "get", "work", "--force-refresh", "--")):
            with self.subTest(args=args):
                self.assert_locked(self.run_broker(*args))
        self.assertEqual(len(self.emu.requests(grant_type="refresh_token")), before)

    def test_X16_twenty_rotations_while_unlocked_need_no_passphrase(self):
        previous = self.store_bytes()
        for i in range(20):
            r = self.run_broker("token", "get", "work", "--force-refresh")  # stdin is empty: no prompt possible
            self.assertEqual(r.returncode, 0, (i, r.stderr))
            self.assertNotIn(b"passphrase", r.stderr)
            now = self.store_bytes()
            self.assertNotEqual(now, previous, "rewritten at rotation %d" % i)
            previous = now
        stored = sodium_file.items(PASSPHRASE, self.store_path)["refresh-token:work"]["refresh_token"]
        self.assertEqual(stored, self.newest_refresh_token())


if __name__ == "__main__":
    unittest.main()
