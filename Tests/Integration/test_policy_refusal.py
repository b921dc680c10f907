"""Conditional Access refusing one resource to this device (interface.md §6): Entra answers the
refresh for that resource with `invalid_grant` and a device-compliance code (AADSTS530003,
AADSTS50131), no `suberror`. That is exit 3 for the resource, naming it and the device
requirement, and the refresh token stays in the keyring: it still serves every other resource.
"""
import unittest

from flows import FlowTestCase

GRAPH = "https://graph.microsoft.com/.default"
DEVOPS = "499b84ac-1321-427f-aa17-267ca6975798/.default"
DESCRIPTIONS = {
    530003: "AADSTS530003: Your device is required to be managed to access this resource.",
    50131: "AADSTS50131: Device is not in required device state: compliant. Conditional Access policy "
           "requires a compliant device, and the device is not compliant.",
}


class PolicyRefusalTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1}

    def test_Y08_a_device_compliance_refusal_keeps_the_sign_in_for_other_resources(self):
        rt = self.signed_in()
        for code, description in DESCRIPTIONS.items():
            for agent in ("auto", "off"):
                with self.subTest(code=code, agent=agent):
                    self.write_config(self.default_config(extra_broker="agent = " + agent))
                    self.emu.clear_faults()
                    self.emu.add_fault("refusal", endpoint="token", grant_type="refresh_token", count=100,
                                       scope="https://graph.microsoft.com", error_codes=[code],
                                       error_description=description)
                    r = self.run_broker("token", "get", "work", "--scope", GRAPH)
                    self.assertEqual((r.returncode, r.stdout), (3, b""), r.stderr)
                    [line] = self.message_lines(r.stderr)
                    self.assertIn("'work' may not use %s from this machine" % GRAPH, line)
                    self.assertIn("AADSTS%d" % code, line)
                    self.assertIn("device", line)
                    self.assertIn("a new 'tokenbroker login work' here does not satisfy the policy", line)
                    # The sign-in is kept, and it still serves Azure DevOps.
                    stored = self.stored_refresh_token()
                    self.assertIsNotNone(stored, "the refresh token was deleted")
                    self.assertEqual(stored, rt)
                    devops = self.run_broker("token", "get", "work", "--scope", DEVOPS)
                    self.assertEqual(devops.returncode, 0, devops.stderr)
                    self.assertTrue(self.emu.validate_access_token(devops.stdout.decode().strip()))
                    rt = self.stored_refresh_token()
                    self.assert_no_secret_leak(r, devops)
                    self.kill_agent()

    def test_Y10_a_device_code_sign_in_blocked_by_policy_names_the_way_that_works(self):
        """Conditional Access blocking the device-code flow (AADSTS53003, as `invalid_grant` and as
        `access_denied`; AADSTS50005): exit 6 naming the browser flow, `--no-open` and the `ssh -L`
        forward of the redirect port; nothing stored."""
        for error, code in (("invalid_grant", 53003), ("access_denied", 53003), ("invalid_grant", 50005)):
            with self.subTest(error=error, code=code):
                seen = len([r for r in self.emu.requests(endpoint="devicecode") if r["status"] == 200])
                p = self.start_login("work")
                dc = self.wait_for_device_code(seen)
                self.emu.add_fault("refusal", endpoint="token", grant_type="urn:ietf:params:oauth:grant-type:device_code",
                                   error=error, error_codes=[code],
                                   error_description="AADSTS%d: Access has been blocked by Conditional Access "
                                                     "policies. The access policy does not allow token issuance." % code)
                self.emu.approve(dc["user_code"])
                r = self.finish(p)
                self.assertEqual((r.returncode, r.stdout), (6, b""), r.stderr)
                [line] = self.message_lines(r.stderr)
                self.assertIn("policy refused the device-code sign-in to 'work'", line)
                self.assertIn("AADSTS%d" % code, line)
                self.assertIn("'tokenbroker login work --browser --no-open'", line)
                self.assertIn("'ssh -L 8400:127.0.0.1:8400 THIS-HOST'", line)
                self.assertEqual(self.keyring_items(), [])


if __name__ == "__main__":
    unittest.main()
