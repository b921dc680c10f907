"""B05 and the login pre-check: `login` when the Secret Service cannot store fails with exit 5
and one line naming the keyring problem *before* any sign-in starts (no device code requested,
no browser started), so the user never completes a flow only to lose the tokens; and nothing is
written anywhere else (no plaintext fallback under HOME, the XDG dirs, the runtime dir or /tmp).

How each situation is made (keyring-notes.md):
- locked: the harness's gnome-keyring, its login collection locked over D-Bus;
- no collection: a bus without gnome-keyring; D-Bus activation starts one from the system's
  service file with the test's private HOME (the harness gives dbus-daemon that HOME), which has
  no keyring, so there is no `default` collection and creating one needs a prompt;
- no Secret Service: a bus whose only service directory is empty, so nothing can be activated;
- locked, on a terminal: the fake Secret Service, whose unlock prompt completes dismissed.
"""
import os
import pty
import select
import subprocess
import time
import unittest

from flows import FlowTestCase
from harness import TOKENBROKER
from keyring_providers import each_provider


class KeyringFailureMixin:
    expected_message = None  # a phrase of the one error line

    def assert_login_fails_before_any_flow(self, *extra):
        """Exit 5 with one line naming the problem, before any request to the provider."""
        started = time.time() - 1  # file times have coarse granularity
        r = self.finish(self.start_login("work", *extra), timeout=60)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("tokenbroker: "), lines)
        self.assertIn(self.expected_message, lines[0])
        # No sign-in was started: no device code, no token request, so no token exists anywhere.
        self.assertEqual(self.device_codes_requested(), 0)
        self.assertEqual(self.emu.requests(), [])
        self.assertEqual(self.files_containing(["refresh_token"], [self.tmp], newer_than=started), [])
        self.assertFalse(os.path.exists(os.path.join(self.home, ".local", "share", "tokenbroker")))
        return r


@each_provider
class LockedKeyringLoginTest(KeyringFailureMixin, FlowTestCase):
    emulator_options = {"device_code_interval": 1}
    expected_message = "keyring is locked"

    def test_locked_keyring_login_exits_5_before_the_device_flow(self):
        """B05: locked login collection, not on a terminal: exit 5 'the keyring is locked' at
        once, no device code requested, no item created."""
        self.keyring_service.lock()
        self.assert_login_fails_before_any_flow()
        self.assertEqual(self.item_paths(), ([], []))
        self.assertTrue(self.keyring_service.locked())  # no unlock was attempted off a terminal

    def test_locked_keyring_login_starts_no_browser(self):
        """The same for the browser flow: exit 5 before the listener or the browser starts."""
        self.keyring_service.lock()
        log = os.path.join(self.tmp, "browser.log")
        browser = os.path.join(self.tmp, "browser.sh")
        with open(browser, "w") as f:
            f.write("#!/bin/sh\necho started >> %s\n" % log)
        os.chmod(browser, 0o755)
        env = self.env(TOKENBROKER_BROWSER=browser)
        r = self.run_broker("login", "work", "--browser", env=env)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b"keyring is locked", r.stderr)
        self.assertFalse(os.path.exists(log))
        self.assertEqual(self.emu.requests(), [])


class NoCollectionLoginTest(KeyringFailureMixin, FlowTestCase):
    keyring = False
    emulator_options = {"device_code_interval": 1}
    expected_message = "no keyring collection"

    def test_no_collection_login_exits_5_before_the_device_flow(self):
        """B05: a Secret Service (activated gnome-keyring) without any collection: exit 5 'no
        keyring collection' at once, before any device code is requested."""
        r = self.assert_login_fails_before_any_flow()
        # Activation did start a Secret Service: this is the no-collection case, not "no service".
        self.bus.wait_for_name("org.freedesktop.secrets")
        self.assertEqual(self.item_paths(), ([], []))


class NoSecretServiceLoginTest(KeyringFailureMixin, FlowTestCase):
    keyring = False
    emulator_options = {"device_code_interval": 1}
    expected_message = "cannot reach the Secret Service"

    def setUp(self):
        super().setUp()
        self.use_bus_without_secret_service()

    def test_no_secret_service_login_exits_5_before_the_device_flow(self):
        """B05: no Secret Service on the bus and none activatable: exit 5 naming it at once."""
        self.assert_login_fails_before_any_flow()
        t = self.run_broker("token", "get", "work", timeout=30)
        self.assertEqual(t.returncode, 5, t.stderr)
        self.assertEqual(t.stdout, b"")


class TerminalUnlockTest(FlowTestCase):
    """interface.md §7: only `login`, on a terminal, asks the desktop to unlock a locked keyring
    (the fake Secret Service's prompt completes dismissed, as one without a display does)."""
    keyring = False
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.log = os.path.join(self.tmp, "fake.log")
        open(self.log, "a").close()
        self.bus.start_fake_secret_service("normal", locked=True, log=self.log)

    def calls(self):
        with open(self.log) as f:
            return f.read()

    def run_on_terminal(self, *args, timeout=60):
        """Runs tokenbroker with stdin and stderr on a pseudo-terminal; returns (status, stdout,
        terminal text)."""
        master, slave = pty.openpty()
        p = subprocess.Popen([TOKENBROKER, *args], stdin=slave, stdout=subprocess.PIPE, stderr=slave,
                             env=self.env())
        os.close(slave)
        text = b""
        deadline = time.time() + timeout
        while time.time() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the terminal's last user closed it
                    break
                if not chunk:
                    break
                text += chunk
            elif p.poll() is not None:
                break
        os.close(master)
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, text.decode(errors="replace")

    def test_on_a_terminal_login_asks_to_unlock_and_stops_when_dismissed(self):
        """A terminal: `login` calls Unlock and shows the prompt; dismissed, it exits 5 at once
        with no device code requested."""
        status, out, text = self.run_on_terminal("login", "work", "--device-code")
        self.assertEqual(status, 5, text)
        self.assertEqual(out, b"")
        self.assertIn("asking the desktop to unlock it", text)
        self.assertIn("unlock prompt was dismissed", text)
        calls = self.calls()
        self.assertIn("Unlock", calls)
        self.assertIn("Prompt", calls)
        self.assertNotIn("CreateItem", calls)
        self.assertEqual(self.device_codes_requested(), 0)

    def test_off_a_terminal_login_never_asks_to_unlock(self):
        r = self.run_broker("login", "work", "--device-code")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b"keyring is locked", r.stderr)
        self.assertNotIn("Unlock", self.calls())
        self.assertEqual(self.device_codes_requested(), 0)


if __name__ == "__main__":
    unittest.main()
