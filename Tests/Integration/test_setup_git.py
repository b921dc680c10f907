"""`tokenbroker setup-git [ACCOUNT] [--dry-run]` against real git's global config
(interface.md §3; protocols.md §1.6): an empty reset value then the absolute path of the
`git-credential-tokenbroker` found (here the test's link on PATH) per host, idempotent, patterns
skipped, an older value of ours updated, a moved install named, and git then asks tokenbroker for
those hosts only."""
import os
import subprocess
import unittest

from test_git_helper import FALLBACK_HELPER, GitTestCase, parse_lines

EXTRA = """
[account second]
provider = azure
client-id = 22222222-2222-3333-4444-555555555555
authority = {authority}
hosts = second.example.test *.pattern.example.test

[host dev.example.test:8443]
account = work
"""


class SetupGitTest(GitTestCase):

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config() + EXTRA.format(authority=self.emu.base_url))

    @property
    def helper(self):
        """The helper value setup-git writes here: the link on the test's PATH, by absolute path."""
        return os.path.join(self.bin, "git-credential-tokenbroker")

    def values(self, host):
        r = subprocess.run(["git", "config", "--global", "--get-all", f"credential.https://{host}.helper"],
                           capture_output=True, text=True, env=self.git_env())
        return r.stdout.split("\n")[:-1]

    def setup_git(self, *args):
        return self.run_broker("setup-git", *args, env=self.git_env())

    def read_gitconfig(self):
        with open(self.gitconfig, "rb") as f:
            return f.read()

    def test_twice_gives_the_same_file(self):
        """Both runs exit 0; the second changes not one byte; every exact host of every account
        gets ['', HELPER PATH], the pattern is skipped with a note."""
        first = self.setup_git()
        self.assertEqual(first.returncode, 0, first.stderr)
        content = self.read_gitconfig()
        mtime = os.stat(self.gitconfig).st_mtime_ns
        second = self.setup_git()
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertEqual(self.read_gitconfig(), content)
        self.assertEqual(os.stat(self.gitconfig).st_mtime_ns, mtime)
        for host in ("git.example.test", "second.example.test", "dev.example.test:8443"):
            self.assertEqual(self.values(host), ["", self.helper], host)
        self.assertIn(b"skipping '*.pattern.example.test'", first.stderr)
        self.assertNotIn(b"pattern", content)
        self.assertEqual(first.stdout, b"")

    def test_a_helper_program_git_cannot_find_is_named(self):
        """git runs the helper `tokenbroker` as `git-credential-tokenbroker` from PATH: a build
        run from its folder has no such link, and setup-git and status --url then say so, with
        what to do, instead of a git that later says "'credential-tokenbroker' is not a git
        command"."""
        without = dict(self.git_env(), PATH=os.environ["PATH"])
        r = self.run_broker("setup-git", env=without)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"'git-credential-tokenbroker', which is not on PATH", r.stderr)
        self.assertIn(b"make install", r.stderr)
        s = self.run_broker("status", "--url", "https://git.example.test/repo", env=without)
        self.assertIn(b"which is not on PATH", s.stdout)
        r = self.setup_git()
        self.assertEqual(r.returncode, 0, r.stderr)
        s = self.run_broker("status", "--url", "https://git.example.test/repo", env=self.git_env())
        self.assertIn(b"git's credential helpers for it: '%s'" % self.helper.encode(), s.stdout)
        for out in (r.stderr, s.stdout, s.stderr):
            self.assertNotIn(b"not on PATH", out)

    def test_dry_run_prints_the_commands_and_writes_nothing(self):
        r = self.setup_git("second", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode().splitlines(), [
            "git config --global --replace-all credential.https://second.example.test.helper ''",
            "git config --global --add credential.https://second.example.test.helper " + self.helper,
        ])
        self.assertEqual(self.read_gitconfig(), b"")

    def test_one_account_and_other_helpers_replaced(self):
        """ACCOUNT limits the hosts; values a user had under that key are replaced and named."""
        subprocess.run(["git", "config", "--global", "--add", "credential.https://second.example.test.helper",
                        "cache"], check=True, env=self.git_env())
        r = self.setup_git("second")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"'cache'", r.stderr)
        self.assertEqual(self.values("second.example.test"), ["", self.helper])
        self.assertEqual(self.values("git.example.test"), [])

    def test_an_older_value_is_updated_and_a_moved_install_named(self):
        """`tokenbroker` (what setup-git wrote before) becomes the path, said on stderr; a path
        that no longer runs (the install moved) is named by status --url and setup-git
        --dry-run, and setup-git replaces it; git then runs the helper by its path."""
        key = "credential.https://second.example.test.helper"
        for value in ("", "tokenbroker"):
            subprocess.run(["git", "config", "--global", "--add", key, value], check=True, env=self.git_env())
        r = self.setup_git("second")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"updating the helper of %s: 'tokenbroker' becomes '%s'" % (key.encode(), self.helper.encode()),
                      r.stderr)
        self.assertEqual(self.values("second.example.test"), ["", self.helper])
        gone = "/nonexistent/tokenbroker/bin/git-credential-tokenbroker"
        subprocess.run(["git", "config", "--global", "--replace-all", key, gone, "^/"],
                       check=True, env=self.git_env())
        self.assertEqual(self.values("second.example.test"), ["", gone])
        s = self.run_broker("status", "--url", "https://second.example.test/repo", env=self.git_env())
        self.assertIn(b"credential helper '%s' is missing or not executable" % gone.encode(), s.stdout)
        r = self.setup_git("second", "--dry-run")
        self.assertIn(b"names '%s', which is missing or not executable" % gone.encode(), r.stderr)
        self.assertEqual(self.values("second.example.test"), ["", gone])
        r = self.setup_git("second")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.values("second.example.test"), ["", self.helper])
        s = self.run_broker("status", "--url", "https://second.example.test/repo", env=self.git_env())
        self.assertNotIn(b"missing", s.stdout)

    def test_git_then_asks_tokenbroker_for_those_hosts_only(self):
        """With a global `credential.helper` that answers for everything, git asks tokenbroker
        (and not that helper) for a set-up host, and that helper for any other host."""
        self.signed_in()
        self.set_helpers(FALLBACK_HELPER)
        self.assertEqual(self.setup_git("work").returncode, 0)
        r, cred = self.fill("git.example.test")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(cred["password"]))
        self.assertEqual(cred["username"], "user1@example.test")
        r, cred = self.fill("other.example.test")
        self.assertEqual((cred["username"], cred["password"]), ("next", "fallback"))

    def test_default_global_file_is_home_gitconfig(self):
        env = self.git_env()
        del env["GIT_CONFIG_GLOBAL"], env["XDG_CONFIG_HOME"]
        r = self.run_broker("setup-git", "second", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.home, ".gitconfig")) as f:
            self.assertIn('[credential "https://second.example.test"]', f.read())

    def test_unknown_account_and_git_errors(self):
        r = self.setup_git("nobody")
        self.assertEqual(r.returncode, 64)
        self.assertIn(b"no account 'nobody'", r.stderr)
        # A global config git cannot write (its directory is a file): git's message, exit 1.
        env = dict(self.git_env(), GIT_CONFIG_GLOBAL=os.path.join(self.gitconfig, "sub", "gitconfig"))
        r = self.run_broker("setup-git", env=env)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"could not lock config file", r.stderr)
        self.assertTrue(r.stderr.splitlines()[-1].startswith(b"tokenbroker: git config --global"), r.stderr)


if __name__ == "__main__":
    unittest.main()
