"""`tokenbroker setup-git`, then real git 2.39 clones and fetches over HTTPS through the helper
from the local git server of test_git_clone.py, which accepts only tokens the emulator still
validates (interface.md §3 `setup-git`, §4).

The revoked-token case, step by step (what git 2.39's http.c does, checked with GIT_TRACE):
1. `git fetch` sends its first request without credentials; the server answers 401.
2. git runs the helper's `get`; tokenbroker answers with its cached access token, which the
   emulator has revoked meanwhile (tokenbroker cannot know).
3. git retries with it; 401 again. Holding a username and password, git runs `erase` with them
   and gives up: "Authentication failed". tokenbroker's `erase` drops that access token (never
   the refresh token).
4. The next git command starts over: 401, `get` finds no cached token, refreshes silently with
   the stored refresh token (no new sign-in), the request succeeds and git runs `store`.
So one command fails per revoked token; git 2.39 does not retry within the same command.
"""
import json
import os
import re
import unittest

from test_git_clone import GitServerTestCase


def helper_actions(stderr):
    """The helper actions git ran, in order, from GIT_TRACE output: the helper by its path, as
    setup-git writes it, or by name (`git credential-tokenbroker`)."""
    return re.findall(r"run_command: '(?:git credential-|/\S*/git-credential-)tokenbroker (\w+)'",
                      stderr.decode(errors="replace"))


class GitFetchTest(GitServerTestCase):

    def setup_git(self):
        r = self.run_broker("setup-git", env=self.git_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def test_setup_git_then_clone_and_fetch(self):
        """setup-git's two lines make git ask tokenbroker for the server, even with another
        helper in the global config (the empty value resets it); clone and fetch both work."""
        self.signed_in()
        self.set_helpers("!f() { echo username=wrong; echo password=wrong; }; f")
        self.setup_git()
        dest = os.path.join(self.tmp, "clone")
        r = self.git("clone", "-q", self.url, dest, GIT_SSL_CAINFO=self.ca_file, GIT_TRACE="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(helper_actions(r.stderr), ["get", "store"])
        self.push_commit("NEWS", "second commit\n")
        r = self.git("-C", dest, "fetch", "-q", GIT_SSL_CAINFO=self.ca_file, GIT_TRACE="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(helper_actions(r.stderr), ["get", "store"])
        show = self.git("-C", dest, "show", "origin/main:NEWS")
        self.assertEqual(show.stdout, b"second commit\n")
        self.assertIn("Basic", self.server.seen)
        # One sign-in, one access token: the fetch reused the token the clone got.
        self.assertEqual(len(self.emu.requests(grant_type="refresh_token")), 0)

    def test_revoked_token_one_failed_fetch_then_the_next_refreshes(self):
        """The server rejects a token revoked at the emulator: git erases it, that fetch fails;
        the next fetch gets a refreshed token without a new sign-in and succeeds."""
        self.signed_in()
        self.setup_git()
        dest = os.path.join(self.tmp, "clone")
        r = self.git("clone", "-q", self.url, dest, GIT_SSL_CAINFO=self.ca_file)
        self.assertEqual(r.returncode, 0, r.stderr)
        (scopes, revoked), = self.cached_access_tokens().items()
        self.assertEqual(self.emu.revoke(revoked), 1)
        refreshes = len(self.emu.requests(grant_type="refresh_token"))
        device_codes = len(self.emu.requests(endpoint="devicecode"))
        self.push_commit("NEWS", "after revocation\n")

        failed = self.git("-C", dest, "fetch", "-q", GIT_SSL_CAINFO=self.ca_file, GIT_TRACE="1")
        self.assertNotEqual(failed.returncode, 0)
        self.assertIn(b"Authentication failed", failed.stderr)
        self.assertEqual(helper_actions(failed.stderr), ["get", "erase"])
        self.assertNotIn(revoked, self.cached_access_tokens().values())
        self.assertEqual(len(self.refresh_token_items()), 1)
        self.assertEqual(len(self.emu.requests(grant_type="refresh_token")), refreshes)

        ok = self.git("-C", dest, "fetch", "-q", GIT_SSL_CAINFO=self.ca_file, GIT_TRACE="1")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertEqual(helper_actions(ok.stderr), ["get", "store"])
        self.assertEqual(self.git("-C", dest, "show", "origin/main:NEWS").stdout, b"after revocation\n")
        self.assertEqual(len(self.emu.requests(grant_type="refresh_token")), refreshes + 1)
        self.assertEqual(len(self.emu.requests(endpoint="devicecode")), device_codes)
        fresh = self.cached_access_tokens()[scopes]
        self.assertNotEqual(fresh, revoked)
        self.assertTrue(self.emu.validate_access_token(fresh))

    def cached_access_tokens(self):
        """{scopes attribute: access token} of the account's cached access-token items."""
        return {i["attributes"].get("scopes"): json.loads(i["secret"])["access_token"]
                for i in self.keyring_items("work") if i["attributes"].get("kind") == "access-token"}


if __name__ == "__main__":
    unittest.main()
