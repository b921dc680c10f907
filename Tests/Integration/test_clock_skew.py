"""Expiries a provider writes by its own clock (a JWT's `exp` and `iat`) on a machine whose clock
is minutes off (docs/bug-cases-4.md Y03): the ID token of `kube-token = id` expires on this
machine's clock at its arrival plus its lifetime (`exp` − `iat`), which is what kubectl's
`expirationTimestamp` says. The emulator's `clock_offset` is the provider's clock apart from the
machine's.
"""
import base64
import calendar
import json
import time
import unittest

from flows import FlowTestCase

ISSUER_PATH = "/realms/kube"


class ClockSkewTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.emu.oidc.configure(path=ISSUER_PATH)
        self.write_config(f"""[broker]
ca-file = {self.ca_file}
login-timeout = 30
agent = off

[account work]
provider = oidc
issuer = {self.emu.base_url}{ISSUER_PATH}
client-id = kube
flow = device-code
kube-token = id
""")

    def sign_in(self):
        p = self.start_login("work")
        dc = self.wait_for_device_code(0, endpoint="oidc.devicecode")
        self.emu.approve(dc["user_code"])
        r = self.finish(p)
        self.assertEqual(r.returncode, 0, r.stderr)

    def credential(self):
        """(the ID token's claims, seconds from now to the ExecCredential's expirationTimestamp)."""
        r = self.run_broker("token", "get", "work", "--format", "exec-credential")
        self.assertEqual(r.returncode, 0, r.stderr)
        status = json.loads(r.stdout)["status"]
        expires = calendar.timegm(time.strptime(status["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
        payload = status["token"].split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return claims, expires - time.time()

    def test_Y03_an_id_token_from_a_provider_clock_ten_minutes_ahead_expires_by_its_lifetime(self):
        """Provider 10 minutes ahead, ID tokens of 60 s: kubectl is told 60 s, not 660 s (after 60 s
        the cluster, on the provider's time, refuses the token)."""
        self.emu.configure(clock_offset=600, id_token_lifetime=60)
        self.sign_in()
        claims, left = self.credential()
        self.assertGreater(claims["exp"], time.time() + 600)  # valid at the provider's clock
        self.assertLessEqual(left, 60)
        self.assertGreater(left, 0)

    def test_Y03_an_id_token_from_a_provider_clock_seven_minutes_behind_is_handed_out(self):
        """Provider 7 minutes behind, ID tokens of 300 s: a fresh token's `exp` is already past on
        this machine's clock; it is handed out for its 300 s (it was refused as expired)."""
        self.emu.configure(clock_offset=-420, id_token_lifetime=300)
        self.sign_in()
        claims, left = self.credential()
        self.assertLess(claims["exp"], time.time())
        self.assertLessEqual(left, 300)
        self.assertGreater(left, 240)


if __name__ == "__main__":
    unittest.main()
