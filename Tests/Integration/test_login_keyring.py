"""B05: `login` when the Secret Service cannot store: the device flow completes, the store fails
with exit 5 and one line naming the keyring problem, and the tokens are written nowhere else
(no plaintext fallback under HOME, the XDG dirs, the runtime dir or /tmp).

How each situation is made (reference/keyring-notes.md):
- locked: the harness's gnome-keyring, its login collection locked over D-Bus;
- no collection: a bus without gnome-keyring; D-Bus activation starts one from the system's
  service file with the test's private HOME (the harness gives dbus-daemon that HOME), which has
  no keyring, so there is no `default` collection and creating one needs a prompt;
- no Secret Service: a bus whose only service directory is empty, so nothing can be activated.
"""
import os
import time
import unittest

from flows import FlowTestCase


class KeyringFailureMixin:
    expected_message = None  # a phrase of the one error line

    def assert_login_fails_to_store_and_writes_no_plaintext(self):
        started = time.time() - 1  # file times have coarse granularity
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = self.message_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("tokenbroker: "), lines)
        self.assertIn(self.expected_message, lines[0])
        # The device flow did complete: the provider issued tokens, which must be nowhere on disk.
        granted = [e for e in self.emu.requests(grant_type="urn:ietf:params:oauth:grant-type:device_code")
                   if e["status"] == 200]
        self.assertEqual(len(granted), 1)
        reply = granted[0]["response"]
        secrets = self.known_secrets()
        for key in ("access_token", "refresh_token"):
            self.assertIn(reply[key], secrets)
        for text in secrets:
            self.assertNotIn(text.encode(), r.stderr)
        self.assertEqual(self.files_containing(secrets, [self.tmp]), [])
        self.assertEqual(self.files_containing(secrets, ["/tmp"], newer_than=started), [])
        self.assertFalse(os.path.exists(os.path.join(self.home, ".local", "share", "tokenbroker")))
        return r


class LockedKeyringLoginTest(KeyringFailureMixin, FlowTestCase):
    emulator_options = {"device_code_interval": 1}
    expected_message = "keyring is locked"

    def test_locked_keyring_login_exits_5_and_writes_no_plaintext(self):
        """B05: locked login collection: exit 5 'the keyring is locked', nothing written anywhere,
        and no item was created in the keyring."""
        self.bus.lock_login_collection()
        r = self.assert_login_fails_to_store_and_writes_no_plaintext()
        self.assertEqual(self.item_paths(), ([], []))


class NoCollectionLoginTest(KeyringFailureMixin, FlowTestCase):
    keyring = False
    emulator_options = {"device_code_interval": 1}
    expected_message = "no keyring collection"

    def test_no_collection_login_exits_5_and_writes_no_plaintext(self):
        """B05: a Secret Service (activated gnome-keyring) without any collection: exit 5 'no
        keyring collection', nothing written anywhere."""
        r = self.assert_login_fails_to_store_and_writes_no_plaintext()
        # Activation did start a Secret Service: this is the no-collection case, not "no service".
        self.bus.wait_for_name("org.freedesktop.secrets")
        self.assertEqual(self.item_paths(), ([], []))
        self.assert_no_secret_leak(r)


class NoSecretServiceLoginTest(KeyringFailureMixin, FlowTestCase):
    keyring = False
    emulator_options = {"device_code_interval": 1}
    expected_message = "cannot reach the Secret Service"

    def setUp(self):
        super().setUp()
        self.use_bus_without_secret_service()

    def test_no_secret_service_login_exits_5_and_writes_no_plaintext(self):
        """B05: no Secret Service on the bus and none activatable: exit 5 naming it, nothing
        written anywhere."""
        r = self.assert_login_fails_to_store_and_writes_no_plaintext()
        t = self.run_broker("token", "get", "work", timeout=30)
        self.assertEqual(t.returncode, 5, t.stderr)
        self.assertEqual(t.stdout, b"")
        self.assert_no_leak(*self.known_secrets(), outputs=[r.stderr, t.stderr])


if __name__ == "__main__":
    unittest.main()
