"""The agent turns many concurrent callers into one refresh (interface.md §8).

Bug cases (bug-cases.md): B06 (concurrent writers leave one item of each kind), B08
(a rotated refresh token is never claimed twice; after the agent restarts, the newest one is
used). Strict rotation throughout: the emulator answers `invalid_grant` to any reuse.
"""
import json
import unittest

from agent_flows import GIT_GET, AgentTestCase

CALLERS = 200


class ConcurrentRefreshTest(AgentTestCase):
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "reject"}

    def setUp(self):
        super().setUp()
        self.rt = self.signed_in_with_expired_token()
        self.assertEqual(self.agents(), [], "no agent before the first hot-path call")

    def assert_one_refresh(self, tokens):
        """Every caller got the same valid token from the one refresh; the keyring holds the
        newest refresh token, once (B06, B08); one agent serves the socket."""
        refreshes = self.refresh_requests()
        self.assertEqual(len(refreshes), 1, [r["status"] for r in refreshes])
        self.assertEqual(refreshes[0]["form"]["refresh_token"], self.rt)
        self.assertEqual(self.invalid_grants(), [])
        self.assertEqual(len(set(tokens)), 1)
        self.assertEqual(tokens[0], refreshes[0]["response"]["access_token"])
        self.assertTrue(self.emu.validate_access_token(tokens[0]))
        newest = refreshes[0]["response"]["refresh_token"]
        self.assertEqual(self.active_refresh_tokens(), [newest])
        self.assertEqual(self.stored_refresh_token(), newest)
        self.assertEqual(len(self.items_of_kind("refresh-token")), 1)
        self.assertEqual(len(self.items_of_kind("access-token")), 1)
        self.assertEqual(len(self.agents()), 1)

    def test_200_concurrent_token_gets_cause_one_refresh(self):
        results = self.run_many([("token", "get", "work")] * CALLERS)
        for r in results:
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, b"")
        self.assert_one_refresh([r.stdout.decode().strip() for r in results])
        self.assert_no_secret_leak(*results)

    def test_200_concurrent_git_gets_cause_one_refresh(self):
        names = [None, "git-credential-tokenbroker"] * (CALLERS // 2)
        results = self.run_many([("get",)] * CALLERS, inputs=[GIT_GET] * CALLERS, argv0s=names)
        for r in results:
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_one_refresh([self.git_password(r) for r in results])

    def test_concurrent_docker_gets_cause_one_refresh(self):
        """The docker helper's name goes through the agent the same way."""
        n = CALLERS // 4
        results = self.run_many([("get",)] * n, inputs=["https://git.example.test\n"] * n,
                                argv0s=["docker-credential-tokenbroker"] * n)
        for r in results:
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assert_one_refresh([json.loads(r.stdout)["Secret"] for r in results])

    def test_newest_refresh_token_is_used_after_the_agent_restarts(self):
        """B08: rotation under concurrency, then the agent is killed and a forced refresh (in a
        new agent) sends the newest refresh token, which the strict emulator accepts."""
        results = self.run_many([("token", "get", "work")] * 50)
        self.assertTrue(all(r.returncode == 0 for r in results))
        newest = self.refresh_requests()[0]["response"]["refresh_token"]
        first_agent = self.agents()
        self.kill_agent()
        self.assertEqual(self.agents(), [])
        forced = self.run_many([("token", "get", "work", "--force-refresh")] * 20)
        for r in forced:
            self.assertEqual(r.returncode, 0, r.stderr)
        refreshes = self.refresh_requests()
        # Callers arriving during a refresh share it; later ones refresh again, each with the
        # token the one before rotated to.
        self.assertGreaterEqual(len(refreshes), 2)
        self.assertEqual(refreshes[1]["form"]["refresh_token"], newest)
        for before, after in zip(refreshes[1:], refreshes[2:]):
            self.assertEqual(after["form"]["refresh_token"], before["response"]["refresh_token"])
        self.assertEqual(self.invalid_grants(), [])
        self.assertNotEqual(self.agents(), first_agent)
        self.assertEqual(self.stored_refresh_token(), refreshes[-1]["response"]["refresh_token"])


class RevokeFamilyTest(AgentTestCase):
    """B08 with the strictest rotation: any replay revokes the whole family, so a single replay
    anywhere would make every later call fail."""
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "revoke-family"}

    def test_concurrent_forced_refreshes_never_replay(self):
        self.signed_in_with_expired_token()
        for _ in range(3):
            results = self.run_many([("token", "get", "work", "--force-refresh")] * 30)
            for r in results:
                self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.invalid_grants(), [])
        self.assertLessEqual(len(self.refresh_requests()), 3 * 30)
        self.assertEqual(self.active_refresh_tokens(), [self.stored_refresh_token()])
        after = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(after.returncode, 0, after.stderr)


if __name__ == "__main__":
    unittest.main()
