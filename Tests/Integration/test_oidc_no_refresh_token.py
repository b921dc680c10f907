"""bug-cases-3.md X03 against the emulator's generic OpenID Provider (Tests/Emulator/idp/oidc.py):
a sign-in whose token reply carries no refresh token (the client may not hold offline access)
does not complete: exit 6, one line naming the issuer and what to change, nothing stored, and
no refresh request with an empty token afterwards. Real binaries, real gnome-keyring.
"""
import unittest

from flows import BrowserFlows, FlowTestCase

PATH = "/realms/main/"


class OIDCNoRefreshTokenTest(BrowserFlows, FlowTestCase):
    emulator_options = {"auto_consent": True, "device_code_interval": 1}

    def test_X03_a_sign_in_without_a_refresh_token_is_exit_6_and_stores_nothing(self):
        self.emu.oidc.configure(path=PATH, sign_in_refresh_tokens=False)
        self.write_config(f"""[broker]
ca-file = {self.ca_file}
login-timeout = 30

[account app]
provider = oidc
issuer = {self.emu.base_url + PATH}
client-id = cli
flow = device-code
""")
        p = self.start_login("app")
        dc = self.wait_for_device_code(0, endpoint="oidc.devicecode")
        self.emu.approve(dc["user_code"])
        r = self.finish(p)
        self.assertEqual(r.returncode, 6, r.stderr)
        lines = self.message_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        host = self.emu.base_url.split("://", 1)[1]
        self.assertIn(f"{host} issued no refresh token", lines[0])
        self.assertIn("Allow Offline Access", lines[0])
        self.assertIsNone(self.stored_refresh_token("app"))
        t = self.run_broker("token", "get", "app")
        self.assertEqual(t.returncode, 3, t.stderr)
        self.assertFalse([q for q in self.emu.requests(endpoint="oidc.token")
                          if "refresh_token" in q.get("form", {}).get("grant_type", "")])


if __name__ == "__main__":
    unittest.main()
