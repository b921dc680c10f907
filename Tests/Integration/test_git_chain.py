"""Another credential helper in git's chain (bug-cases-3.md X14), with real git 2.39 and its own
`git credential-cache` and `git credential-store`, against the local HTTPS git server of
test_git_clone.py: after `tokenbroker logout` no helper may serve the signed-out account's token.

Measured here (git 2.39, which has no `capability[]`, so tokenbroker answers username/password):
git runs `store` on every helper after a success, so `cache` keeps the access token in memory for
its timeout and `store` writes it to ~/.git-credentials in plain text; `logout` therefore runs
`git credential reject` for each host it served."""
import os
import subprocess
import unittest

from test_git_clone import GitServerTestCase


class GitHelperChainTest(GitServerTestCase):

    def setUp(self):
        super().setUp()
        self.addCleanup(lambda: self.git("credential-cache", "exit"))

    def ls_remote(self):
        return self.git("-c", "http.sslCAInfo=" + self.ca_file, "ls-remote", self.url)

    def test_X14_logout_makes_a_cache_in_front_forget_the_token(self):
        """git-credential-oauth's layout: `cache --timeout 21600`, then tokenbroker, no setup-git.
        The cache keeps the token after the first success; after `tokenbroker logout work`,
        `git ls-remote` no longer succeeds on it (the emulator still accepts the token: logout
        does not revoke it)."""
        self.signed_in()
        self.set_helpers("cache --timeout 21600", "tokenbroker")
        ok = self.ls_remote()
        self.assertEqual(ok.returncode, 0, ok.stderr)
        cached = self.git("credential", "fill", input=f"protocol=https\nhost={self.host}\n\n")
        token = dict(line.split("=", 1) for line in cached.stdout.decode().splitlines())["password"]
        self.assertTrue(self.emu.validate_access_token(token))

        r = self.run_broker("logout", "work", env=self.git_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(token), "still valid at the provider")
        self.assertEqual(self.keyring_items("work"), [])
        again = self.ls_remote()
        self.assertNotEqual(again.returncode, 0, "a helper served the signed-out token")
        self.assertIn(b"tokenbroker login work", again.stderr)

    def test_X14_logout_removes_the_token_a_store_after_us_wrote_in_plain_text(self):
        """`store` after tokenbroker (git runs `store` on it after each success): the token lands
        in ~/.git-credentials; logout removes that line."""
        self.signed_in()
        creds = os.path.join(self.tmp, "git-credentials")
        self.set_helpers("tokenbroker", "store --file " + creds)
        ok = self.ls_remote()
        self.assertEqual(ok.returncode, 0, ok.stderr)
        port = str(self.server.server_address[1])
        with open(creds) as f:
            self.assertIn(port, f.read())  # git writes the host as 127.0.0.1%3aPORT
        r = self.run_broker("logout", "work", env=self.git_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(creds) as f:
            self.assertNotIn(port, f.read())

    def test_X14_setup_git_resets_the_chain_so_the_cache_never_sees_a_token(self):
        """With setup-git's empty reset line for the host, a global `cache` is not asked at all."""
        self.signed_in()
        self.set_helpers("cache --timeout 21600")
        r = self.run_broker("setup-git", env=self.git_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        ok = self.ls_remote()
        self.assertEqual(ok.returncode, 0, ok.stderr)
        probe = subprocess.run(["git", "credential-cache", "get"], input=f"protocol=https\nhost={self.host}\n\n".encode(),
                               capture_output=True, env=self.git_env(), timeout=30)
        self.assertEqual(probe.stdout, b"")


if __name__ == "__main__":
    unittest.main()
