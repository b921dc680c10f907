"""A `token get` racing a `logout` (interface.md §6 codes 3 and 5): an item that
vanishes between the search and the read of its secret is "not signed in" (exit 3), never a broken
keyring (exit 5), which is only for a keyring that itself fails."""
import subprocess
import time
import unittest

from harness import TOKENBROKER
from keyring_providers import each_provider
from test_keyring import GIT_GET, KeyringTestCase, needs_fake


class VanishingItemTest(KeyringTestCase):
    """The race forced with the fake Secret Service: every item goes right after the first search
    that finds them, before libsecret loads their properties (`search`) or their secret
    (`secret`), as when `logout` runs in between."""
    keyring = False

    def assert_not_signed_in(self, r):
        self.assertEqual((r.returncode, r.stdout), (3, b""), r.stderr)
        self.assertIn(b"tokenbroker login work", r.stderr)
        self.assertNotIn(b"Secret Service", r.stderr)

    def check_vanished(self, vanish, agent):
        """`token get` while every item goes at `vanish`: exit 3, and no refresh was tried."""
        self.write_config(self.default_config(extra_broker="agent = " + agent))
        self.bus.start_fake_secret_service("normal", seed=self.seed_refresh_tokens("RT-VANISHING-1"),
                                           vanish=vanish)
        before = len(self.emu.requests(grant_type="refresh_token"))
        self.assert_not_signed_in(self.run_broker("token", "get", "work"))
        self.assertEqual(len(self.emu.requests(grant_type="refresh_token")), before)

    @needs_fake
    def test_items_gone_before_their_properties_load(self):
        self.check_vanished("search", "off")

    @needs_fake
    def test_items_gone_before_their_secret_loads(self):
        self.check_vanished("secret", "off")

    @needs_fake
    def test_items_gone_under_the_agent(self):
        self.check_vanished("search", "auto")

    @needs_fake
    def test_an_item_gone_right_after_its_write_is_a_logout_that_stands(self):
        """A refresh's rotated refresh token is written and deleted at once (a `logout` right
        after the write): the call hands out the access token it got (exit 0, as had the logout
        come a moment later), names no Secret Service failure, and nothing is written back."""
        self.write_config(self.default_config(extra_broker="agent = off"))
        self.bus.start_fake_secret_service("normal", seed=self.seed_refresh_tokens("RT-VANISHING-3"),
                                           vanish="create")
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.strip(), r.stderr)
        self.assertNotIn(b"Secret Service", r.stderr)
        self.assertEqual(self.run_broker("token", "get", "work", "--force-refresh").returncode, 3)

    @needs_fake
    def test_a_create_item_that_fails_is_no_logout(self):
        """CreateItem itself failing with NoSuchObject is the keyring's failure, not an item
        deleted at once: the call fails (exit 5, the Secret Service named), it never reports a
        rotated refresh token stored that was not."""
        self.write_config(self.default_config(extra_broker="agent = off"))
        self.bus.start_fake_secret_service("normal", seed=self.seed_refresh_tokens("RT-VANISHING-4"),
                                           vanish="create-fails")
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b"Secret Service", r.stderr)

    @needs_fake
    def test_git_get_of_a_vanished_item_is_not_signed_in(self):
        self.write_config(self.default_config(extra_broker="agent = off"))
        self.bus.start_fake_secret_service("normal", seed=self.seed_refresh_tokens("RT-VANISHING-2"),
                                           vanish="search")
        r = self.run_broker("get", input=GIT_GET)
        self.assertEqual((r.returncode, r.stdout), (3, b"quit=1\n"), r.stderr)
        self.assertNotIn(b"Secret Service", r.stderr)


@each_provider
class LogoutBurstTest(KeyringTestCase):
    """The same race as it happens, against a real gnome-keyring: bursts of `token get` (each its
    own process, no agent) with a `logout` started among them; each `token get` prints a token or
    "not signed in" and `logout` signs out, none exits 5. Before the fix, 8 of 225 such calls
    exited 5 (`token get`: "No such secret item at path"; `logout`: "items of 'work' remain after
    deleting them", a token get having stored after its delete). The delay before `logout` only
    aims it into the burst; a short burst may miss the window, the fake above never does."""
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "accept"}

    def test_token_get_racing_logout_never_exits_5(self):
        self.write_config(self.default_config(extra_broker="agent = off"))
        self.signed_in()
        stored = [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"][0]
        outcomes = {}
        for round in range(8):
            self.put_back(stored, stored["secret"])
            procs = [subprocess.Popen([TOKENBROKER, "token", "get", "work"] + ["--force-refresh"] * (i % 2),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env())
                     for i in range(8)]
            time.sleep(0.1 + 0.05 * round)
            logout = subprocess.Popen([TOKENBROKER, "logout", "work"], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, env=self.env())
            out, err = logout.communicate(timeout=120)
            self.assertEqual(logout.returncode, 0, err)
            for p in procs:
                out, err = p.communicate(timeout=120)
                outcomes[p.returncode] = outcomes.get(p.returncode, 0) + 1
                self.assertIn(p.returncode, (0, 3), err)
                if p.returncode == 3:
                    self.assertIn(b"tokenbroker login work", err)
            self.run_broker("logout", "work")
        self.assertEqual(set(outcomes) - {0, 3}, set(), outcomes)


class PutBackTest(KeyringTestCase):
    """A stale copy put back with secret-tool a while after tokenbroker's last write is read, as
    the Glewlwyd dead-token test needs. secret-tool lists `xdg:schema` apart from the attributes;
    put back without it, the item came out `org.freedesktop.Secret.Generic` (3 of 3 with a 1-2 s
    pause; gnome-keyring had re-read its file, which keeps no schema name) and tokenbroker, which
    reads only its own schema (interface.md §7), said "not signed in"."""
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "accept"}

    def test_an_item_put_back_later_keeps_the_schema_and_is_read(self):
        self.write_config(self.default_config(extra_broker="agent = off"))
        self.signed_in()
        [item] = [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"]
        self.assertEqual(self.run_broker("token", "get", "work", "--force-refresh").returncode, 0)
        time.sleep(1.5)  # past the second of that write: the case that failed
        self.put_back(item, item["secret"])
        self.assertEqual([(i["secret"], i.get("schema")) for i in self.keyring_items("work")
                          if i["attributes"].get("kind") == "refresh-token"],
                         [(item["secret"], "org.tokenbroker.Secret")])
        r = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
