"""`provider = github` (interface.md §2.2) against the emulator's GitHub (Tests/Emulator/idp/github.py,
written from GitHub's documentation) as a GitHub Enterprise Server at the emulator's origin, and a
real `git http-backend` behind HTTPS that admits only a token the emulator validates, sent as
GitHub takes it: Basic, with `x-access-token` (or the token owner's login) as the username and the
token as the password. Real git clones, pushes and fetches through git-credential-tokenbroker.
"""
import base64
import json
import os
import subprocess
import threading
import time
import unittest

from flows import BrowserFlows, FlowTestCase
from harness import TOKENBROKER
from test_git_clone import _GitHTTPHandler, serve_repository
from test_git_helper import GitTestCase, parse_lines

APP = "Iv1.0123456789abcdef"
LOGIN = "octocat"


class _GitHubGitHandler(_GitHTTPHandler):
    """GitHub's rule for git over HTTPS: Basic only (a 401 offers `Basic realm="GitHub"`), the
    token as the password, the username `x-access-token` or the token owner's login."""

    def authorized(self):
        auth = self.headers.get("Authorization", "")
        self.server.seen.append(auth.split(" ", 1)[0] if auth else None)
        if not auth.startswith("Basic "):
            return False
        user, _, token = base64.b64decode(auth[6:]).decode().partition(":")
        info = self.server.validate(token)
        self.server.users.append(user)
        return bool(info) and user in ("x-access-token", info["username"])

    def challenges(self):
        return ['Basic realm="GitHub"']


class GitHubForgeTest(BrowserFlows, FlowTestCase, GitTestCase):
    emulator_options = {"device_code_interval": 1, "auto_consent": True}

    def setUp(self):
        super().setUp()
        self.emu.set_user(LOGIN)
        self.server, self.seed = serve_repository(self, _GitHubGitHandler)
        self.server.users = []
        self.host = "127.0.0.1:%d" % self.server.server_address[1]
        self.url = f"https://{self.host}/repo.git"
        self.write_config(self.github_config())
        self.set_helpers("", TOKENBROKER)

    def github_config(self, extra=""):
        return f"""[broker]
ca-file = {self.ca_file}
login-timeout = 60

[account gh]
provider = github
authority = {self.emu.base_url}
client-id = {APP}
hosts = {self.host}
{extra}"""

    def login_gh(self, *extra):
        seen = len([r for r in self.emu.requests(endpoint="github.devicecode") if r["status"] == 200])
        p = self.start_login("gh", *extra)
        dc = self.wait_for_device_code(seen, endpoint="github.devicecode")
        self.emu.approve(dc["user_code"])
        r = self.finish(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def refreshes(self):
        return self.emu.requests(endpoint="github.token", grant_type="refresh_token")

    def test_clone_push_and_fetch_through_the_helper(self):
        """A device-code sign-in (GitHub's device flow, form fields, errors with HTTP 200) shows
        the user's login; git clones, pushes and fetches with Basic `x-access-token`:TOKEN, and
        the token is never answered as a Bearer credential, even to git that offers authtype."""
        r = self.login_gh()
        self.assertIn(b"signed in to gh as octocat", r.stdout)
        dest = os.path.join(self.tmp, "clone")
        r = self.git("clone", "-q", self.url, dest, GIT_SSL_CAINFO=self.ca_file)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(dest, "CHANGES"), "w") as f:
            f.write("pushed through tokenbroker\n")
        ident = ["-c", "user.name=Test", "-c", "user.email=test@example.test"]
        self.assertEqual(self.git("-C", dest, "add", "CHANGES").returncode, 0)
        self.assertEqual(self.git(*ident, "-C", dest, "commit", "-q", "-m", "change").returncode, 0)
        r = self.git("-C", dest, "push", "-q", "origin", "main", GIT_SSL_CAINFO=self.ca_file)
        self.assertEqual(r.returncode, 0, r.stderr)
        log = subprocess.run(["git", "-C", os.path.join(self.server.root, "repo.git"), "log", "--format=%s", "-1"],
                             capture_output=True, env=self.git_env())
        self.assertEqual(log.stdout, b"change\n")
        self.push_commit("NEWS", "second\n")
        r = self.git("-C", dest, "fetch", "-q", GIT_SSL_CAINFO=self.ca_file)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.git("-C", dest, "show", "origin/main:NEWS").stdout, b"second\n")
        self.assertEqual(set(self.server.users), {"x-access-token"})
        self.assertNotIn("Bearer", self.server.seen)
        answer = self.run_broker("get", input="capability[]=authtype\nprotocol=https\nhost=%s\n"
                                 "wwwauth[]=Basic realm=\"GitHub\"\n\n" % self.host)
        self.assertEqual([k for k, _ in parse_lines(answer.stdout)], ["username", "password", "password_expiry_utc"])
        # The sign-in asked for the preset's scopes and got GitHub's comma-separated ones back.
        [device] = [r for r in self.emu.requests(endpoint="github.devicecode") if r["status"] == 200]
        self.assertEqual(sorted(device["form"]["scope"].split()), ["gist", "repo", "workflow"])
        self.assertNotIn("client_secret", device["form"])

    def push_commit(self, name, text):
        """A commit pushed to the served repository over the file system, on top of what it has."""
        ident = ["-c", "user.name=Test", "-c", "user.email=test@example.test"]
        subprocess.run(["git", *ident, "-C", self.seed, "pull", "-q", "--rebase",
                        os.path.join(self.server.root, "repo.git"), "main"], check=True, env=self.git_env())
        with open(os.path.join(self.seed, name), "w") as f:
            f.write(text)
        subprocess.run(["git", "-C", self.seed, "add", name], check=True, env=self.git_env())
        subprocess.run(["git", *ident, "-C", self.seed, "commit", "-q", "-m", name], check=True, env=self.git_env())
        subprocess.run(["git", "-C", self.seed, "push", "-q", os.path.join(self.server.root, "repo.git"), "main"],
                       check=True, env=self.git_env())

    def test_five_concurrent_fetches_after_expiry_cause_one_refresh(self):
        """GitHub's rotating refresh tokens die once used, so two refreshes of one token would
        sign the user out: 5 concurrent `git fetch` after the access token expired cause exactly
        one refresh, which the emulator holds for 1.5 s (without the delay a missing single
        flight could pass by luck), and all 5 succeed with the new token."""
        clones = []
        for i in range(5):
            dest = os.path.join(self.tmp, "c%d" % i)
            subprocess.run(["git", "clone", "-q", os.path.join(self.server.root, "repo.git"), dest],
                           check=True, env=self.git_env())
            subprocess.run(["git", "-C", dest, "remote", "set-url", "origin", self.url], check=True, env=self.git_env())
            clones.append(dest)
        self.emu.github.configure(access_token_lifetime=1)
        self.login_gh()
        self.emu.github.configure(access_token_lifetime=28800)
        time.sleep(1.2)
        self.emu.add_fault("delay", "github.token", count=5, seconds=1.5, grant_type="refresh_token")
        results = [None] * 5

        def fetch(i):
            results[i] = self.git("-C", clones[i], "fetch", "-q", GIT_SSL_CAINFO=self.ca_file, timeout=120)
        threads = [threading.Thread(target=fetch, args=(i,)) for i in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(150)
        for r in results:
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.refreshes()), 1, self.refreshes())
        self.assertEqual(self.emu.pending_faults()[0]["count"], 4)

    def test_bad_refresh_token_signs_out_and_a_server_error_does_not(self):
        """A 502 at the refresh keeps the refresh token (the next get works once GitHub is
        back); GitHub's `bad_refresh_token` (HTTP 200) is that grant dead: deleted, and the next
        get exits 3 naming the login."""
        self.emu.github.configure(access_token_lifetime=1)
        self.login_gh()
        time.sleep(1.2)
        self.emu.add_fault("status", "github.token", count=3, status=502, grant_type="refresh_token")
        ask = "protocol=https\nhost=%s\n\n" % self.host
        r = self.run_broker("get", input=ask)
        self.assertNotEqual(r.returncode, 0)
        self.assertIsNotNone(self.stored_refresh_token("gh"))
        rt = self.stored_refresh_token("gh")
        self.emu.revoke(rt)
        r = self.run_broker("get", input=ask)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn(b"tokenbroker login gh", r.stderr)
        self.assertIsNone(self.stored_refresh_token("gh"))
        [last] = self.refreshes()[-1:]
        self.assertEqual((last["status"], last["response"]["error"]), (200, "bad_refresh_token"))

    def test_revoke_without_a_secret_signs_out_and_names_the_applications_page(self):
        """GitHub revokes a grant only with the app's secret: `revoke` of a public client signs
        out locally, exits 0 and names where the user revokes it (interface.md §2.2)."""
        self.login_gh()
        r = self.run_broker("revoke", "gh")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(("revoke the grant at %s/settings/applications" % self.emu.base_url).encode(), r.stderr)
        self.assertIsNone(self.stored_refresh_token("gh"))

    def test_browser_sign_in_with_the_apps_secret(self):
        """`--browser`: the code grant with PKCE S256 at {authority}/login/oauth/authorize, the
        secret in the body of the redemption and of each refresh (never in a URL)."""
        self.emu.github.configure(secrets={APP: "SENTINEL-gh-secret"})
        self.write_config(self.github_config("client-secret = SENTINEL-gh-secret\n"))
        r, _ = self.browser_login("gh")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"signed in to gh as octocat", r.stdout)
        [authorize] = self.emu.requests(endpoint="github.authorize")
        self.assertEqual(authorize["query"]["code_challenge_method"], "S256")
        self.assertNotIn("SENTINEL", json.dumps(authorize["query"]))
        [redeem] = self.emu.requests(endpoint="github.token")
        self.assertEqual(redeem["form"]["client_secret"], "SENTINEL-gh-secret")
        self.assertIn("code_verifier", redeem["form"])
        t = self.run_broker("token", "get", "gh", "--force-refresh")
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertTrue(self.emu.validate_access_token(t.stdout.decode().strip()))
        [refresh] = self.refreshes()
        self.assertEqual(refresh["form"]["client_secret"], "SENTINEL-gh-secret")

    def test_exec_gives_gh_its_enterprise_variables(self):
        """`exec gh -- COMMAND` on a GitHub Enterprise Server account: COMMAND sees the token in
        GH_ENTERPRISE_TOKEN and the server in GH_HOST (gh's own variables), refreshed first."""
        self.emu.github.configure(access_token_lifetime=1)
        self.login_gh()
        self.emu.github.configure(access_token_lifetime=28800)
        time.sleep(1.2)
        r = self.run_broker("exec", "gh", "--", "sh", "-c", 'printf "%s\\n%s\\n%s\\n" "$GH_ENTERPRISE_TOKEN" "$GH_HOST" "${GH_TOKEN-unset}"')
        self.assertEqual(r.returncode, 0, r.stderr)
        token, host, plain = r.stdout.decode().splitlines()
        self.assertTrue(self.emu.validate_access_token(token))
        self.assertEqual(host, self.emu.base_url.split("://", 1)[1])
        self.assertEqual(plain, "unset")
        self.assertEqual(len(self.refreshes()), 1)

    def test_device_flow_outcomes(self):
        """slow_down with HTTP 200 adds 5 s to the gap (measured between polls at the emulator);
        expired_token and access_denied end the sign-in with exit 6; a disabled device flow
        (HTTP 400 on the device request) is exit 6 naming --browser."""
        self.emu.script_device_polls(["authorization_pending", "slow_down", "authorization_pending", "success"])
        self.login_gh()
        gaps = self.emu.poll_gaps()
        self.assertGreaterEqual(gaps[1], 6 - 0.05, gaps)   # after slow_down: 1 s + 5 s
        self.assertGreaterEqual(gaps[2], 6 - 0.05, gaps)   # and for every poll after it
        for answer, words in (("expired_token", b"expired"), ("access_denied", b"declined")):
            with self.subTest(answer=answer):
                self.emu.script_device_polls([answer])
                r = self.finish(self.start_login("gh"))
                self.assertEqual(r.returncode, 6, r.stderr)
                self.assertIn(words, r.stderr)
        self.emu.github.configure(device_flow=False)
        r = self.finish(self.start_login("gh"))
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn(b"tokenbroker login gh --browser", r.stderr)


if __name__ == "__main__":
    unittest.main()
