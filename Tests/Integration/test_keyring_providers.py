"""What each Secret Service provider does that gnome-keyring does not, and the one line the user
gets for it (README "Keyrings"): KeePassXC's dialogs (an unlock nobody answers, items held back
until the user allows a client), KWallet without the QCA plugins its encrypted sessions need, and
KWallet's wallet opened at a Plasma login. The store's own behaviour runs against every provider
in the test files parametrised with `each_provider`."""
import unittest

import test_login_keyring
from keyring_providers import KWallet, KeePassXC
from test_keyring import GIT_GET, NOT_SIGNED_IN, KeyringTestCase


class ProviderTestCase(KeyringTestCase):
    keyring = False  # each test starts its provider as it needs it

    def use(self, provider):
        self.keyring_service = provider
        provider.start()
        return provider

    # Runs tokenbroker with stdin and stderr on a pseudo-terminal: (status, stdout, terminal text).
    run_on_terminal = test_login_keyring.TerminalUnlockTest.run_on_terminal


class KeePassXCTest(ProviderTestCase):

    def test_an_unlock_dialog_nobody_answers_says_so(self):
        """`login` on a terminal asks KeePassXC to unlock its locked database; KeePassXC shows its
        unlock dialog and nobody answers it: exit 5 saying the dialog was not answered, not that
        the Secret Service did not answer (which sends the user to restart a daemon that works)."""
        self.write_config(self.default_config(extra_broker="login-timeout = 3"))
        self.use(KeePassXC(self)).lock()
        status, out, text = self.run_on_terminal("login", "work", "--device-code")
        self.assertEqual(status, 5, text)
        self.assertEqual(out, b"")
        self.assertIn("asking the desktop to unlock it", text)
        self.assertIn("unlock dialog was not answered within 3 s", text)
        self.assertNotIn("restart", text)
        self.assertEqual(self.emu.requests(endpoint="devicecode"), [])

    def test_items_held_back_until_the_user_allows_are_not_a_locked_keyring(self):
        """KeePassXC's default asks the user before each client reads an item
        (`ConfirmAccessItem`): with nobody to answer, the items read locked while the database is
        unlocked. `token get` and git `get` exit 5 naming KeePassXC's setting, never "the keyring
        is locked" (the user unlocks it and nothing changes) and never "not signed in"."""
        self.use(KeePassXC(self, confirm_access=True))
        self.signed_in()  # KeePassXC lets the client that created an item read it
        self.assertFalse(self.keyring_service.locked())
        for args, stdin in ((("token", "get", "work"), b""), (("get",), GIT_GET)):
            r = self.run_broker(*args, input=stdin)
            self.assert_store_failure(r, "Confirm when passwords are retrieved by clients")
            self.assertNotIn(b"keyring is locked", r.stderr)
            self.assertNotIn(NOT_SIGNED_IN, r.stderr)


class KWalletTest(ProviderTestCase):

    def test_without_the_qca_plugins_the_package_is_named(self):
        """kwalletd5 without libqca-qt5-2-plugins (no Debian package pulls it in) cannot make the
        encrypted session every client asks for: `login` and `token get` exit 5 naming the
        package, not telling the user to start gnome-keyring (a second Secret Service)."""
        self.use(KWallet(self, without_qca_plugins=True))
        rc, out, err = self.login(approve=False)
        self.assertEqual(rc, 5, err)
        self.assertIn(b"libqca-qt5-2-plugins", err)
        self.assertNotIn(b"gnome-keyring", err)
        self.assertEqual(self.emu.requests(endpoint="devicecode"), [])
        r = self.run_broker("token", "get", "work")
        self.assert_store_failure(r, "libqca-qt5-2-plugins")
        self.assertNotIn(b"gnome-keyring", r.stderr)

    def test_the_wallet_opened_at_login_serves_tokens(self):
        """After a Plasma login pam_kwallet5 has opened the wallet, yet kwalletd's Secret Service
        reads its collection locked until a client asks to unlock it, which kwalletd grants an
        open wallet without a dialog: `token get` and git `get` work, as they do on a desktop
        where the wallet is open; a wallet kwalletd has closed is still "locked"."""
        wallet = self.use(KWallet(self))
        self.signed_in()
        wallet.log_in_again()
        self.assertTrue(wallet.is_open())
        self.assertTrue(wallet.locked())
        r = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
        g = self.run_broker("get", input=GIT_GET)
        self.assertEqual(g.returncode, 0, g.stderr)
        wallet.lock()
        self.assert_store_failure(self.run_broker("token", "get", "work", "--force-refresh"), "locked")


if __name__ == "__main__":
    unittest.main()
