"""The agent belongs to the D-Bus session it was started in: a caller from another session (the
first one ended, e.g. a desktop logout and a new login) is served without it, and the old agent
stops, so the next call starts one in the new session (found by a new-user trial: the old agent
kept answering exit 5 'connection is closed' for up to an hour)."""
import unittest

from agent_flows import AgentTestCase
from harness import Bus


class AgentSessionTest(AgentTestCase):
    def test_a_new_dbus_session_is_served_and_gets_its_own_agent(self):
        self.signed_in()
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        old = self.wait_until(lambda: self.agents(), what="an agent")
        # The first session ends; a new one starts with the same HOME (same keyring on disk).
        self.bus.close()
        self.bus = Bus(self.home)
        self.bus.start_keyring()
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
        g = self.run_broker("get", input="protocol=https\nhost=git.example.test\n\n")
        self.assertEqual(g.returncode, 0, g.stderr)
        self.assertIn(b"password=", g.stdout)
        self.wait_until(lambda: not set(old) & set(self.agents()), what="the old agent to stop")


if __name__ == "__main__":
    unittest.main()
