"""`account add` / `account remove` edit the config file line by line (interface.md §2.1): the
edited group goes with the comment directly above it, and every other byte of the file stays as
it was: comments above, below, between and inside groups, blank lines, CRLF line ends, a last line
without a newline. `--replace` sets the keys given and keeps the others in their places."""
import os
import stat
import unittest

from harness import BrokerTestCase

A = b"[account a]\nprovider = azure\nclient-id = ca\n"
B = b"# about b\n[account b]\nprovider = azure\n# inside b\nclient-id = cb\n"
C = b"# about c\n[account c]\nprovider = azure\nclient-id = cc\n"
NEW = b"[account n]\nprovider = azure\nclient-id = cn\n"


class AccountEditLinesTest(BrokerTestCase):
    keyring = False

    def edit(self, before, *args, status=0):
        """Writes `before` as the config, runs `account ARGS`, returns the file's bytes after."""
        os.makedirs(os.path.dirname(self.config_path), exist_ok=True)
        with open(self.config_path, "wb") as f:
            f.write(before)
        os.chmod(self.config_path, 0o640)
        r = self.run_broker("account", *args)
        self.assertEqual(r.returncode, status, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(self.config_path).st_mode), 0o640)
        with open(self.config_path, "rb") as f:
            return f.read()

    def add(self, before):
        return self.edit(before, "add", "n", "--provider", "azure", "--client-id", "cn")

    def test_add_appends_the_group_and_keeps_every_byte_before_it(self):
        cases = (
            (b"", NEW),
            (A, A + b"\n" + NEW),
            (A.rstrip(b"\n"), A + b"\n" + NEW),  # no newline at the end
            (A + b"\n\n", A + b"\n\n" + NEW),  # blank lines at the end are kept, none added
            (b"# header\n\n" + A + b"\n" + B + b"\n# the last comment\n",
             b"# header\n\n" + A + b"\n" + B + b"\n# the last comment\n\n" + NEW),
            (A.replace(b"\n", b"\r\n"), A.replace(b"\n", b"\r\n") + b"\r\n" + NEW.replace(b"\n", b"\r\n")),
            (b"[account a]\nprovider=azure\nclient-id=ca\n", b"[account a]\nprovider=azure\nclient-id=ca\n\n"
             b"[account n]\nprovider=azure\nclient-id=cn\n"),  # the file's spacing around '='
        )
        for before, after in cases:
            with self.subTest(before=before):
                self.assertEqual(self.add(before), after)
        names = self.run_broker("accounts", "--names")
        self.assertEqual((names.returncode, names.stdout), (0, b"a\nn\n"), names.stderr)

    def test_remove_takes_the_group_and_the_comment_above_it_only(self):
        header = b"# header\n\n"
        cases = (
            ("b", header + A + b"\n" + B + b"\n" + C, header + A + b"\n" + C),  # between two groups
            ("b", A + b"\n" + B + b"\n# free note\n\n" + C, A + b"\n# free note\n\n" + C),
            ("a", A + b"\n" + B, B),  # the first group
            ("a", b"# about a\n" + A + b"\n" + B, B),
            ("a", header + A + b"\n" + B, header + B),
            ("b", A + b"\n" + B, A),  # the last group
            ("b", A + b"\n" + B.rstrip(b"\n"), A),
            ("b", A + b"\n" + B + b"\n# the last comment\n", A + b"\n# the last comment\n"),
            ("a", A, b""),  # the only group
            ("a", header + A, b"# header\n"),
            ("b", (A + b"\n" + B + b"\n" + C).replace(b"\n", b"\r\n"), (A + b"\n" + C).replace(b"\n", b"\r\n")),
            ("b", A + b"\n" + B + b"\n" + A.replace(b"[account a]", b"[account b]"), A),  # a group twice
        )
        for name, before, after in cases:
            with self.subTest(name=name, before=before):
                self.assertEqual(self.edit(before, "remove", name), after)

    def test_replace_sets_the_keys_given_in_their_places_and_keeps_the_others(self):
        before = (b"# header\n\n# about a\n[account a]\nprovider = azure\n# the client\nclient-id =   old  \n"
                  b"tenant = contoso.example\n# after the last key\n\n" + B)
        after = self.edit(before, "add", "a", "--replace", "--client-id", "new", "--scopes", "openid email")
        self.assertEqual(after, before.replace(b"client-id =   old  \n", b"client-id =   new\n").replace(
            b"tenant = contoso.example\n", b"tenant = contoso.example\nscopes = openid email\n"))
        # --provider may be given again, but not changed: the kept keys are the old provider's.
        again = self.edit(after, "add", "a", "--replace", "--provider", "azure", "--tenant", "other.example")
        self.assertEqual(again, after.replace(b"tenant = contoso.example", b"tenant = other.example"))
        r = self.run_broker("account", "add", "a", "--replace", "--provider", "google")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn(b"account remove a", r.stderr)
        # A bad value given with --replace names the option, and the file stays as it was.
        for args, named in ((("--authority", "http://login.example"), b"--authority:"),
                            (("--tennant", "x"), b"did you mean '--tenant'")):
            with self.subTest(args=args):
                r = self.run_broker("account", "add", "a", "--replace", *args)
                self.assertEqual(r.returncode, 64, r.stderr)
                self.assertIn(named, r.stderr)
                self.assertIn(b"not changed", r.stderr)
                self.assertNotIn(b"fix the config file", r.stderr)
        r = self.run_broker("account", "add", "a", "--replace")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn(b"nothing to set", r.stderr)
        with open(self.config_path, "rb") as f:
            self.assertEqual(f.read(), again)
        crlf = A.replace(b"\n", b"\r\n") + b"\r\n" + B.replace(b"\n", b"\r\n")
        self.assertEqual(self.edit(crlf, "add", "a", "--replace", "--client-id", "new", "--tenant", "t.example"),
                         crlf.replace(b"client-id = ca\r\n", b"client-id = new\r\ntenant = t.example\r\n"))

    def test_a_path_group_bound_to_another_account_needs_replace(self):
        before = A + b"\n# contoso's repositories\n[host dev.azure.com/contoso]\naccount = a\n"
        args = ("add", "n", "--provider", "azure", "--client-id", "cn", "--hosts", "dev.azure.com/contoso")
        self.assertEqual(self.edit(before, *args, status=64), before)
        r = self.run_broker("account", *args, "--replace")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"bound [host dev.azure.com/contoso] to account 'n'", r.stderr)
        with open(self.config_path, "rb") as f:
            self.assertEqual(f.read(), before.replace(b"account = a", b"account = n") + b"\n" + NEW)

    def test_replace_of_an_account_the_file_lacks_needs_a_provider(self):
        path = os.path.join(self.tmp, "new-config")
        r = self.run_broker("--config", path, "account", "add", "n", "--replace", "--client-id", "cn")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn(b"missing --provider (azure, google, sharepoint, oidc or github)", r.stderr)
        self.assertFalse(os.path.exists(path))
        r = self.run_broker("--config", path, "account", "add", "n", "--replace", "--provider", "azure", "--client-id", "cn")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"added account 'n'", r.stderr)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), NEW)


if __name__ == "__main__":
    unittest.main()
