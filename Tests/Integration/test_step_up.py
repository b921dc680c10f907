"""Step-up for one resource (interface.md §6 code 3): when a refresh for one
resource needs MFA or consent, the message names that resource's scopes and the `login` that asks
for them; that login (`--scope S`) sends the server's claims challenge on its authorization
request; the refresh token is kept throughout and still serves the other resources.
"""
import json
import unittest

from flows import BrowserFlows, FlowTestCase

VAULT = "https://vault.azure.net/.default"
LOGIN_HINT = "run 'tokenbroker login work --scope %s'" % VAULT


class StepUpTest(BrowserFlows, FlowTestCase):
    emulator_options = {"auto_consent": True, "device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.rt = self.signed_in()
        self.emu.set_user_flags(step_up_resources=["https://vault.azure.net"])

    def assert_step_up_message(self, r):
        self.assertEqual(r.returncode, 3, r.stderr)
        lines = self.message_lines(r.stderr)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("to use %s" % VAULT, lines[0])
        self.assertIn("multi-factor authentication", lines[0])
        self.assertTrue(lines[0].endswith(LOGIN_HINT), lines[0])
        self.assertNotIn("capolids", lines[0])  # the claims challenge is for the sign-in, not the user

    def test_step_up_names_the_scopes_keeps_the_refresh_token_and_login_scope_satisfies_it(self):
        for agent in ("auto", "off"):
            self.write_config(self.default_config(extra_broker="agent = " + agent))
            r = self.run_broker("token", "get", "work", "--scope", VAULT)
            self.assert_step_up_message(r)
            # Kept: it still serves the account's own scopes.
            self.assertEqual(self.stored_refresh_token(), self.rt)
            other = self.run_broker("token", "get", "work", "--force-refresh")
            self.assertEqual(other.returncode, 0, other.stderr)
            self.rt = self.stored_refresh_token()
            self.assertIsNotNone(self.rt)

        refusal = self.refresh_requests()[-2]["response"]
        login, _ = self.browser_login("work", "--scope", VAULT)
        self.assertEqual(login.returncode, 0, login.stderr)
        [authorize] = self.emu.requests(endpoint="authorize")
        params = authorize["query"]
        self.assertIn(VAULT, params["scope"].split())
        self.assertNotIn("https://graph.microsoft.com/User.Read", params["scope"].split())
        self.assertEqual(json.loads(params["claims"]), json.loads(refusal["claims"]))

        vault = self.run_broker("token", "get", "work", "--scope", VAULT, "--force-refresh")
        self.assertEqual(vault.returncode, 0, vault.stderr)
        self.assertTrue(self.emu.validate_access_token(vault.stdout.decode().strip()))
        graph = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(graph.returncode, 0, graph.stderr)
        self.assert_no_secret_leak(r, login, vault, graph)

    def test_git_get_for_a_host_that_needs_step_up(self):
        self.write_config(self.default_config() + "\n[host vault.example.test]\naccount = work\nscopes = %s\n" % VAULT)
        r = self.run_broker("get", input="protocol=https\nhost=vault.example.test\n\n")
        self.assertEqual(r.stdout, b"")
        self.assert_step_up_message(r)
        self.assertEqual(self.stored_refresh_token(), self.rt)

    def test_login_scope_with_the_device_code(self):
        refused = self.run_broker("token", "get", "work", "--scope", VAULT)
        self.assert_step_up_message(refused)
        r = self.login_and_approve("work", "--scope", VAULT)
        self.assertEqual(r.returncode, 0, r.stderr)
        [devicecode] = self.emu.requests(endpoint="devicecode")[-1:]
        self.assertIn(VAULT, devicecode["form"]["scope"].split())
        self.assertEqual(json.loads(devicecode["form"]["claims"]),
                         json.loads(self.refresh_requests()[-1]["response"]["claims"]))
        vault = self.run_broker("token", "get", "work", "--scope", VAULT)
        self.assertEqual(vault.returncode, 0, vault.stderr)

    def test_login_scope_needs_a_value(self):
        r = self.run_broker("login", "work", "--scope")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertTrue(r.stderr.startswith(b"error: missing value for '--scope'"), r.stderr)


if __name__ == "__main__":
    unittest.main()
