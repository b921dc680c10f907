"""`tokenbroker status` (interface.md §3): signed in, not signed in, a locked encrypted
store, an unreachable keyring, a URL served by a path group, a URL no account serves, and a URL
with `credential.helper=cache` before tokenbroker (bug-cases-3.md X14's warning). Its output never
holds a token (the leak greps)."""
import json
import os
import time
import unittest

from test_encrypted_store import PASSPHRASE, EncryptedStoreCase
from test_git_helper import GitTestCase

PATHS = """
[account work2]
provider = azure
tenant = 22222222-bbbb-4bbb-8bbb-000000000002
client-id = 11111111-2222-3333-4444-555555555555
authority = {base}
scopes = https://graph.microsoft.com/User.Read

[host dev.example.test/org2]
account = work2
"""


class StatusTest(GitTestCase):

    def status(self, *args, status=0):
        r = self.run_broker("status", *args, env=self.git_env())
        self.assertEqual(r.returncode, status, r.stderr)
        return r

    def status_json(self, *args, status=0):
        return json.loads(self.status(*args, "--json", status=status).stdout)

    def test_signed_in_account_with_its_tokens_and_no_token_in_the_output(self):
        self.signed_in()
        self.set_helpers("tokenbroker")
        fill, _ = self.fill()
        token = dict(line.split("=", 1) for line in fill.stdout.decode().splitlines())["password"]
        doc = self.status_json("work")
        (account,) = doc["accounts"]
        self.assertEqual((account["name"], account["provider"], account["signed_in"]), ("work", "azure", True))
        self.assertEqual(account["identity"], "user1@example.test")
        self.assertRegex(account["tenant"], r"^[0-9a-f-]{36}$")  # the tid recorded at sign-in
        self.assertLessEqual(abs(account["refresh_token_obtained_at"] - time.time()), 120)
        self.assertIsNone(account["refresh_token_expires_on"])
        (held,) = account["access_tokens"]
        self.assertEqual(held["scopes"], ["https://graph.microsoft.com/User.Read"])
        self.assertGreater(held["seconds_left"], 3000)
        self.assertEqual(doc["store"], {"kind": "secret-service", "state": "available", "detail": None})
        self.assertTrue(doc["agent"]["running"])  # the fill started it
        text = self.status()
        self.assertIn(b"signed in as user1@example.test", text.stdout)
        self.assertIn(b"access token [https://graph.microsoft.com/User.Read]:", text.stdout)
        refresh = self.refresh_token_items()[0]["secret"]
        self.assert_no_leak(token, json.loads(refresh)["refresh_token"],
                            outputs=[text.stdout, text.stderr, json.dumps(doc)])

    def test_not_signed_in_exits_3_for_a_named_account_and_0_for_all(self):
        doc = self.status_json("work", status=3)
        self.assertEqual(doc["accounts"][0]["signed_in"], False)
        self.assertIn(b"not signed in: run 'tokenbroker login work'", self.status("work", status=3).stdout)
        self.assertEqual(self.status_json()["accounts"][0]["signed_in"], False)

    def test_url_served_by_a_path_group_and_a_url_no_account_serves(self):
        self.write_config(self.default_config() + PATHS.format(base=self.emu.base_url))
        self.signed_in()
        self.set_helpers("", "tokenbroker", key="credential.https://dev.example.test.helper")
        doc = self.status_json("--url", "https://dev.example.test/org2/p/_git/r", status=3)
        url = doc["url"]
        self.assertEqual((url["rule"], url["account"], url["path"], url["token"]),
                         ("[host dev.example.test/org2]", "work2", "org2/p/_git/r", "sign-in"))
        self.assertEqual(url["helpers"], ["tokenbroker"])
        self.assertEqual(url["warnings"], [])
        self.assertEqual([a["name"] for a in doc["accounts"]], ["work2"])

        url = self.status_json("--url", "https://git.example.test/some/repo")["url"]
        self.assertEqual((url["rule"], url["account"], url["token"]), ("hosts = git.example.test of [account work]", "work", "cached"))
        self.assertGreater(url["token_expires_on"], time.time() + 3000)

        doc = self.status_json("--url", "https://nobody.example.test/x")
        self.assertEqual((doc["url"]["rule"], doc["url"]["account"], doc["url"]["token"]), (None, None, None))
        self.assertIn(b"no account serves it", self.status("--url", "https://nobody.example.test/x").stdout)
        bad = self.run_broker("status", "--url", "ftp://x/y")
        self.assertEqual(bad.returncode, 64, bad.stderr)

    def test_X14_a_cache_helper_before_tokenbroker_is_named_as_a_warning(self):
        self.signed_in()
        self.set_helpers("cache --timeout 21600", "tokenbroker")
        url = self.status_json("--url", "https://git.example.test/repo")["url"]
        self.assertEqual(url["helpers"], ["cache --timeout 21600", "tokenbroker"])
        (warning,) = url["warnings"]
        self.assertIn("'cache --timeout 21600' is asked before tokenbroker", warning)
        self.assertIn(b"warning: credential helper 'cache --timeout 21600' is asked before",
                      self.status("--url", "https://git.example.test/repo").stdout)
        # setup-git's reset line for the host leaves only tokenbroker.
        r = self.run_broker("setup-git", env=self.git_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        url = self.status_json("--url", "https://git.example.test/repo")["url"]
        self.assertEqual((url["helpers"], url["warnings"]), ([os.path.join(self.bin, "git-credential-tokenbroker")], []))
        # A storage helper after tokenbroker keeps the tokens git hands it.
        self.set_helpers("", "tokenbroker", "store", key="credential.https://git.example.test.helper")
        (warning,) = self.status_json("--url", "https://git.example.test/repo")["url"]["warnings"]
        self.assertIn("'store' is asked after tokenbroker and keeps the tokens", warning)


class StatusWithoutKeyringTest(GitTestCase):
    keyring = False

    def test_keyring_unreachable_is_said_not_signed_out(self):
        # No session bus at that address: no Secret Service can be reached (nor activated).
        env = self.git_env(DBUS_SESSION_BUS_ADDRESS="unix:path=" + self.tmp + "/no-bus")
        r = self.run_broker("status", "work", "--json", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["store"]["state"], "unreachable")
        self.assertIsNone(doc["accounts"][0]["signed_in"])
        self.assertIn(b"unknown: the store could not be read", self.run_broker("status", env=env).stdout)


class StatusLockedStoreTest(EncryptedStoreCase):

    def test_locked_encrypted_store_is_said_as_locked(self):
        self.signed_in()
        self.assertEqual(self.run_broker("lock").returncode, 0)
        r = self.run_broker("status", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["store"]["kind"], doc["store"]["state"]), ("encrypted-file", "locked"))
        self.assertIn("tokenbroker unlock", doc["store"]["detail"])
        self.assertIsNone(doc["accounts"][0]["signed_in"])
        self.assertNotIn(PASSPHRASE, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
