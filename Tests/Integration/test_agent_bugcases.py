"""Bug cases (bug-cases.md) with the agent running the whole time: B07 (callers while
a login is pending never start a flow and answer at once), B10 (git `erase` through the agent
drops only the token git rejected, never the refresh token), B20 (no access token of an identity
outlives its sign-out or a sign-in as someone else, in the agent's memory or anywhere).
"""
import time
import unittest

from agent_flows import GIT_GET, AgentTestCase

LOGIN_HINT = b"tokenbroker login work"
USER1 = "user1@example.test"
USER2 = "user2@example.test"


class PendingLoginTest(AgentTestCase):

    def test_calls_while_a_login_is_pending_start_no_flow(self):
        """B07 (background variant, scaled down): 50 token and git gets over ~5 s while a login
        waits for its code: each exits 3 within seconds naming the login, none starts a flow;
        once the login completes, calls get tokens."""
        login = self.start_login()
        self.wait_for_device_code()
        took = []
        for batch in range(5):
            start = time.time()
            results = self.run_many([("token", "get", "work"), ("get",)] * 5, inputs=[b"", GIT_GET] * 5)
            took.append(time.time() - start)
            for i, r in enumerate(results):
                self.assertEqual(r.returncode, 3, r.stderr)
                self.assertIn(LOGIN_HINT, r.stderr)
                # git's helper answers only quit=1 (interface.md §4); token get nothing.
                self.assertEqual(r.stdout, b"quit=1\n" if i % 2 else b"")
            time.sleep(0.5)
        self.assertLess(max(took), 20)
        self.assertEqual(self.device_codes_requested(), 1)
        self.assertEqual(self.emu.requests(path_contains="authorize"), [])
        self.assertEqual(len(self.agents()), 1)
        self.emu.approve()
        done = self.finish(login)
        self.assertEqual(done.returncode, 0, done.stderr)
        for r in self.run_many([("token", "get", "work")] * 10):
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))


class EraseThroughAgentTest(AgentTestCase):

    def test_erase_drops_only_the_rejected_token(self):
        """B10: `erase` with a password we never handed out changes nothing (the next get is the
        same token, no refresh); `erase` with the token we handed out drops it from the agent and
        the keyring, keeps the refresh token, and the next get refreshes."""
        rt = self.signed_in()
        first = self.run_broker("get", input=GIT_GET)
        token = self.git_password(first)
        erase_old = self.run_broker("erase", input=GIT_GET.rstrip("\n") + "\nusername=%s\npassword=AT_OLD\n\n" % USER1)
        self.assertEqual(erase_old.returncode, 0, erase_old.stderr)
        self.assertEqual(self.git_password(self.run_broker("get", input=GIT_GET)), token)
        self.assertEqual(self.refresh_requests(), [])
        erase = self.run_broker("erase", argv0="git-credential-tokenbroker",
                                input=GIT_GET.rstrip("\n") + "\nusername=%s\npassword=%s\n\n" % (USER1, token))
        self.assertEqual(erase.returncode, 0, erase.stderr)
        self.assertEqual(self.cached_access_tokens(), {})
        self.assertEqual(self.stored_refresh_token(), rt)
        again = self.git_password(self.run_broker("get", input=GIT_GET))
        self.assertNotEqual(again, token)
        self.assertTrue(self.emu.validate_access_token(again))
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assertEqual(len(self.agents()), 1)


class SignOutTest(AgentTestCase):
    """B20 through both entry points, the agent running (one pid) the whole time."""

    def tokens(self):
        t = self.run_broker("token", "get", "work")
        g = self.run_broker("get", input=GIT_GET)
        return t, g

    def assert_tokens_of(self, user):
        t, g = self.tokens()
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertEqual(g.returncode, 0, g.stderr)
        token = t.stdout.decode().strip()
        self.assertEqual(self.git_password(g), token)
        self.assertEqual(self.emu.validate_access_token(token)["username"], user)
        return token

    def login_as(self, user):
        self.emu.set_user(user)
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(user.encode(), r.stdout)

    def test_logout_then_login_as_another_user(self):
        self.login_as(USER1)
        at1 = self.assert_tokens_of(USER1)
        [pid] = self.agents()
        out = self.run_broker("logout", "work")
        self.assertEqual(out.returncode, 0, out.stderr)
        t, g = self.tokens()
        for r in (t, g):
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn(LOGIN_HINT, r.stderr)
            self.assertNotIn(at1.encode(), r.stdout)
        self.login_as(USER2)
        at2 = self.assert_tokens_of(USER2)
        self.assertNotEqual(at1, at2)
        self.assertEqual(self.agents(), [pid])

    def test_login_as_another_user_without_logout(self):
        self.login_as(USER1)
        at1 = self.assert_tokens_of(USER1)
        [pid] = self.agents()
        self.login_as(USER2)
        at2 = self.assert_tokens_of(USER2)
        self.assertNotEqual(at1, at2)
        for scope in ("https://graph.microsoft.com/User.Read", "https://graph.microsoft.com/Mail.Read"):
            r = self.run_broker("token", "get", "work", "--scope", scope)
            self.assertEqual(self.emu.validate_access_token(r.stdout.decode().strip())["username"], USER2)
        self.assertEqual(self.agents(), [pid])

    def test_revoke_drops_the_agents_tokens(self):
        self.login_as(USER1)
        self.assert_tokens_of(USER1)
        r = self.run_broker("revoke", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        t, g = self.tokens()
        self.assertEqual((t.returncode, g.returncode), (3, 3))


if __name__ == "__main__":
    unittest.main()
