"""Outside the agent, refreshes of one account are single-flight across processes
(interface.md §6 and §8): a lock in the runtime directory is held around "re-read the
stored refresh token, refresh, store", and what another process stored meanwhile is used.

Strict rotation throughout (the emulator answers `invalid_grant` to any reuse, as GitLab, Okta,
Auth0 and Keycloak can be set up to): before the lock, ten concurrent forced refreshes with
`agent = off` signed the account out in every burst.
"""
import os
import signal
import subprocess
import unittest

from agent_flows import AgentTestCase
from harness import TOKENBROKER

CALLERS = 10
BURSTS = 3


class NoAgentRefreshTest(AgentTestCase):
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "reject"}

    def setUp(self):
        super().setUp()
        self.write_agent_config(extra_broker="agent = off")
        self.signed_in_with_expired_token()

    def assert_signed_in_with_newest_token(self):
        self.assertEqual(self.invalid_grants(), [])
        refreshes = self.refresh_requests()
        self.assertEqual(self.stored_refresh_token(), refreshes[-1]["response"]["refresh_token"])
        self.assertEqual(self.active_refresh_tokens(), [self.stored_refresh_token()])
        # Each refresh redeemed the token the one before it rotated to: none was replayed.
        for before, after in zip(refreshes, refreshes[1:]):
            self.assertEqual(after["form"]["refresh_token"], before["response"]["refresh_token"])

    def test_concurrent_forced_refreshes_never_sign_out(self):
        for burst in range(BURSTS):
            before = len(self.refresh_requests())
            results = self.run_many([("token", "get", "work", "--force-refresh")] * CALLERS)
            for r in results:
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
            made = len(self.refresh_requests()) - before
            # Callers that start while another holds the lock take its fresh token; a caller
            # that starts after that refresh has ended refreshes again (it asked to).
            self.assertGreaterEqual(made, 1)
            self.assertLessEqual(made, CALLERS)
            self.assert_signed_in_with_newest_token()
            self.assertEqual(self.agents(), [], "agent = off starts no agent")
        self.assert_no_secret_leak(*results)

    def test_callers_waiting_on_a_slow_refresh_share_it(self):
        """Callers that arrive while one refresh is in progress use its result: one refresh."""
        self.emu.add_fault("delay", "token", seconds=2, grant_type="refresh_token")
        results = self.run_many([("token", "get", "work", "--force-refresh")] * CALLERS)
        for r in results:
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assertEqual(len({r.stdout for r in results}), 1)
        self.assert_signed_in_with_newest_token()

    def test_concurrent_gets_of_an_expired_token_refresh_once(self):
        self.emu.add_fault("delay", "token", seconds=1, grant_type="refresh_token")
        results = self.run_many([("token", "get", "work")] * CALLERS)
        for r in results:
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assert_signed_in_with_newest_token()

    def test_callers_that_each_must_refresh_take_turns(self):
        """--min-valid above the provider's lifetime: every caller refreshes, one after the
        other, each with the token the one before stored."""
        results = self.run_many([("token", "get", "work", "--min-valid", "4000")] * CALLERS)
        for r in results:
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_signed_in_with_newest_token()


class KilledAgentInFlightTest(AgentTestCase):
    """Azure's rotation (a rotated-away token stays valid), so the dead agent's unanswered
    refresh costs nothing but the count of refreshes."""

    def test_killed_agent_with_ten_calls_in_flight(self):
        """The agent dies while ten calls wait on its refresh: each front hands its call to
        tokenbroker-core, and those share one refresh instead of replaying the token."""
        self.signed_in_with_expired_token()
        self.assertEqual(self.run_broker("agent", "start").returncode, 0)
        [pid] = self.wait_until(self.agents, what="the agent to start")
        self.emu.add_fault("delay", "token", seconds=3, grant_type="refresh_token")
        procs = [subprocess.Popen([TOKENBROKER, "token", "get", "work"], env=self.env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(CALLERS)]
        for p in procs:
            self.addCleanup(self._reap, p)
        self.wait_until(lambda: self.refresh_requests(), what="the agent's refresh to reach the emulator")
        os.kill(pid, signal.SIGKILL)
        results = [self.finish(p) for p in procs]
        for r in results:
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
        self.assertEqual(self.invalid_grants(), [])
        # The dead agent's refresh (answered to no one) and one from the fallbacks, not ten.
        self.assertLessEqual(len(self.refresh_requests()), 2, [r["form"]["refresh_token"] for r in self.refresh_requests()])
        rt = self.stored_refresh_token()
        self.assertIn(rt, self.active_refresh_tokens())


if __name__ == "__main__":
    unittest.main()
