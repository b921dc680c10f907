"""`tokenbroker account add` / `account remove` editing the config file with its comments kept
(interface.md §2.1, §3): the result is checked before anything is written. Line by line edits:
test_account_edit_lines."""
import os
import stat
import unittest

from harness import CLIENT_ID, BrokerTestCase

COMMENTED = """# tokenbroker settings, written by hand
[broker]
# where tokens live
store = secret-service
ca-file = {ca}

# the work account
[account work]
provider = azure
client-id = {cid}
authority = {authority}
# a comment inside a group
hosts = git.example.test

# the last comment
"""


class AccountEditTest(BrokerTestCase):
    keyring = False

    def setUp(self):
        super().setUp()
        self.write_config(COMMENTED.format(ca=self.ca_file, cid=CLIENT_ID, authority=self.emu.base_url))

    def read(self):
        with open(self.config_path) as f:
            return f.read()

    def comments(self, text):
        return [line for line in text.splitlines() if line.startswith("#")]

    def test_add_keeps_every_comment_and_the_account_works(self):
        before = self.read()
        r = self.run_broker("account", "add", "personal", "--provider", "azure", "--client-id", CLIENT_ID,
                            "--tenant", "contoso.example", "--authority", self.emu.base_url,
                            "--scopes", "openid email", "--hosts", "europe-west1-docker.pkg.dev",
                            "--git-username=oauth2accesstoken")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"")
        self.assertIn(b"added account 'personal'", r.stderr)
        after = self.read()
        self.assertEqual(self.comments(after), self.comments(before))
        self.assertEqual(after, before + f"\n[account personal]\nprovider = azure\nclient-id = {CLIENT_ID}\n"
                         f"tenant = contoso.example\nauthority = {self.emu.base_url}\nscopes = openid email\n"
                         "hosts = europe-west1-docker.pkg.dev\ngit-username = oauth2accesstoken\n")
        names = self.run_broker("accounts", "--names")
        self.assertEqual((names.returncode, names.stdout), (0, b"work\npersonal\n"))
        r = self.run_broker("get", input="protocol=https\nhost=europe-west1-docker.pkg.dev\n\n")
        self.assertEqual(r.returncode, 3)  # configured, not signed in
        self.assertIn(b"tokenbroker login personal", r.stderr)

    def test_bad_key_or_value_leaves_the_file_untouched(self):
        before = self.read()
        mtime = os.stat(self.config_path).st_mtime_ns
        for args, named in (
            (("--provider", "azure", "--client-id", "c", "--tennant", "x"), b"--tennant"),
            (("--provider", "azure", "--client-id", "c", "--hosts", "bad_host!"), b"hosts"),
            (("--provider", "azure", "--client-id", "c", "--authority", "http://login.example"), b"authority"),
            (("--provider", "azure"), b"client-id"),
            (("--provider", "azure", "--client-id", "c", "--hosts", "git.example.test"), b"git.example.test"),
        ):
            with self.subTest(args=args):
                r = self.run_broker("account", "add", "new", *args)
                self.assertEqual(r.returncode, 64, r.stderr)
                self.assertIn(named, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertEqual(self.read(), before)
        self.assertEqual(os.stat(self.config_path).st_mtime_ns, mtime)

    def test_existing_account_needs_replace(self):
        before = self.read()
        r = self.run_broker("account", "add", "work", "--provider", "azure", "--client-id", "other")
        self.assertEqual(r.returncode, 64)
        self.assertIn(b"--replace", r.stderr)
        self.assertEqual(self.read(), before)
        r = self.run_broker("account", "add", "work", "--provider", "azure", "--client-id", "other", "--replace")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"set provider, client-id of account 'work'", r.stderr)
        self.assertEqual(self.read(), before.replace(f"client-id = {CLIENT_ID}", "client-id = other"))

    def test_remove_and_its_refusals(self):
        r = self.run_broker("account", "add", "spare", "--provider", "azure", "--client-id", "c")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_broker("account", "remove", "spare")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"tokenbroker logout spare", r.stderr)
        self.assertNotIn("[account spare]", self.read())
        self.assertIn("# the work account", self.read())
        before = self.read()
        r = self.run_broker("account", "remove", "spare")
        self.assertEqual(r.returncode, 64)
        self.assertIn(b"no account 'spare'", r.stderr)
        # An account another group depends on stays.
        self.write_config(before + "\n[host dev.example.test]\naccount = work\n")
        before = self.read()
        r = self.run_broker("account", "remove", "work")
        self.assertEqual(r.returncode, 64)
        self.assertIn(b"[host dev.example.test]", r.stderr)
        self.assertEqual(self.read(), before)

    def test_new_file_is_private_and_config_option_names_the_file(self):
        path = os.path.join(self.tmp, "other", "dir", "config")
        r = self.run_broker("--config", path, "account", "add", "a", "--provider", "azure", "--client-id", "c")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode), 0o700)
        r = self.run_broker("accounts", "--names", env=self.env(TOKENBROKER_CONFIG=path))
        self.assertEqual(r.stdout, b"a\n")


if __name__ == "__main__":
    unittest.main()
