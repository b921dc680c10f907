"""Google accounts against the emulator's /google endpoints (protocols.md §3): the
browser sign-in (PKCE + client secret + offline access, consent on the first sign-in only), the
limited-input device flow (`verification_url`, its own client), refresh without rotation, and
Google's error classes.

Bug cases (bug-cases.md): B11 (no refresh token in the reply keeps the stored one),
B12 (invalid_grant deletes, invalid_rapt keeps), B26 (state and PKCE), B27 (device polling),
B29 (no secret, client secrets included, in any output).
"""
import base64
import hashlib
import json
import unittest

from flows import (GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET, GOOGLE_DEVICE_CLIENT_ID,
                   GOOGLE_DEVICE_CLIENT_SECRET, BrowserFlows, FlowTestCase)

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
SIGNED_IN = b"signed in to g as user1@example.test\n"
SECRETS = [GOOGLE_CLIENT_SECRET, GOOGLE_DEVICE_CLIENT_SECRET]


def s256(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class GoogleTestCase(BrowserFlows, FlowTestCase):
    emulator_options = {"auto_consent": True, "device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config() + self.google_config())

    def record(self):
        items = self.items_of_kind("refresh-token", "g")
        self.assertEqual(len(items), 1, items)
        return json.loads(items[0]["secret"])

    def google_token_requests(self, grant_type):
        return [e for e in self.emu.requests(endpoint="google.token") if e["form"].get("grant_type") == grant_type]

    def device_login(self, *extra):
        seen = len([r for r in self.emu.requests(endpoint="google.devicecode") if r["status"] == 200])
        p = self.start_login("g", *extra)
        dc = self.wait_for_device_code(seen, endpoint="google.devicecode")
        self.emu.approve(dc["user_code"])
        return self.finish(p, 90), dc


class GoogleBrowserTest(GoogleTestCase):

    def test_browser_sign_in_with_pkce_client_secret_and_consent_once(self):
        """The first sign-in asks for offline access with consent and gets a refresh token; the
        code is redeemed with the verifier and the client secret at the 127.0.0.1 redirect; a
        second sign-in asks without consent, gets no refresh token and keeps the stored one."""
        r, log = self.browser_login("g")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, SIGNED_IN)
        [authorize] = self.emu.requests(endpoint="google.authorize")
        q = authorize["query"]
        self.assertRegex(q["redirect_uri"], r"^http://127\.0\.0\.1:\d+/$")
        self.assertEqual((q["access_type"], q["prompt"], q["code_challenge_method"]), ("offline", "consent", "S256"))
        self.assertEqual(q["client_id"], GOOGLE_CLIENT_ID)
        self.assertTrue({"openid", "email"} <= set(q["scope"].split()))
        [redeem] = self.google_token_requests("authorization_code")
        self.assertEqual(redeem["status"], 200)
        self.assertEqual(redeem["form"]["client_secret"], GOOGLE_CLIENT_SECRET)
        self.assertEqual(s256(redeem["form"]["code_verifier"]), q["code_challenge"])
        record = self.record()
        self.assertEqual(record["refresh_token"], redeem["response"]["refresh_token"])
        self.assertEqual(record["client_id"], GOOGLE_CLIENT_ID)
        self.assertEqual(record["identity"], "user1@example.test")

        again, _ = self.browser_login("g")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(again.stdout, SIGNED_IN)
        second = self.emu.requests(endpoint="google.authorize")[1]["query"]
        self.assertNotIn("prompt", second)
        self.assertNotIn("refresh_token", self.google_token_requests("authorization_code")[1]["response"])
        self.assertEqual(self.record()["refresh_token"], record["refresh_token"])
        self.assert_no_secret_leak(r, again, extra=SECRETS)

    def test_wrong_state_is_rejected_for_google_too(self):
        """B26: a redirect with another state gets 400 and is never redeemed."""
        r, log = self.browser_login("g", probes=[{"query": "code=ATTACKER&state=WRONG"}, {"query": "code=ATTACKER"}])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([e["status"] for e in self.browser_events(log, "probe")], [400, 400])
        self.assertNotIn("ATTACKER", [e["form"].get("code") for e in self.google_token_requests("authorization_code")])

    def test_refresh_keeps_the_refresh_token(self):
        """B11, protocols.md §3.3: Google's refresh replies carry no refresh token: the stored one
        stays, and each refresh goes out with the client id and secret that obtained it."""
        r, _ = self.browser_login("g")
        self.assertEqual(r.returncode, 0, r.stderr)
        stored = self.record()["refresh_token"]
        for _ in range(2):
            t = self.run_broker("token", "get", "g", "--force-refresh")
            self.assertEqual(t.returncode, 0, t.stderr)
            self.assertTrue(self.emu.validate_access_token(t.stdout.decode().strip()))
        refreshes = self.google_token_requests("refresh_token")
        self.assertEqual(len(refreshes), 2)
        for e in refreshes:
            self.assertEqual(e["form"]["refresh_token"], stored)
            self.assertEqual((e["form"]["client_id"], e["form"]["client_secret"]), (GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET))
            self.assertNotIn("refresh_token", e["response"])
        self.assertEqual(self.record()["refresh_token"], stored)

    def test_invalid_rapt_keeps_and_invalid_grant_deletes(self):
        """B12 for Google: `invalid_grant` with `invalid_rapt` (reauthentication) is exit 3 and
        keeps the refresh token; a revoked grant (plain invalid_grant) is exit 3 and deletes it."""
        r, _ = self.browser_login("g")
        self.assertEqual(r.returncode, 0, r.stderr)
        stored = self.record()["refresh_token"]
        self.emu.set_user_flags(mfa_required=True)
        t = self.run_broker("token", "get", "g", "--force-refresh")
        self.assertEqual(t.returncode, 3, t.stderr)
        self.assertIn(b"invalid_rapt", t.stderr)
        self.assertIn(b"tokenbroker login g", t.stderr)
        self.assertEqual(self.record()["refresh_token"], stored)

        self.emu.set_user_flags(mfa_required=False)
        self.emu.revoke(stored)
        t = self.run_broker("token", "get", "g", "--force-refresh")
        self.assertEqual(t.returncode, 3, t.stderr)
        self.assertIn(b"invalid_grant", t.stderr)
        self.assertEqual(self.items_of_kind("refresh-token", "g"), [])
        self.assert_no_secret_leak(t, extra=SECRETS)


class GoogleDeviceFlowTest(GoogleTestCase):

    def test_device_flow_with_verification_url_and_its_own_client(self):
        """protocols.md §3.4: the device flow uses device-client-id (and its secret on polls),
        shows Google's `verification_url`, stores which client obtained the token, and later
        refreshes with that client."""
        r, dc = self.device_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, SIGNED_IN)
        self.assertIn(("open %s/devicelogin and enter the code %s" % (self.emu.base_url, dc["user_code"])).encode(),
                      r.stderr)
        [start] = self.emu.requests(endpoint="google.devicecode")
        self.assertEqual(start["form"]["client_id"], GOOGLE_DEVICE_CLIENT_ID)
        self.assertIn("verification_url", start["response"])
        self.assertNotIn("verification_uri", start["response"])
        polls = self.google_token_requests(DEVICE_GRANT)
        self.assertTrue(polls)
        for e in polls:
            self.assertEqual((e["form"]["client_id"], e["form"]["client_secret"]),
                             (GOOGLE_DEVICE_CLIENT_ID, GOOGLE_DEVICE_CLIENT_SECRET))
        self.assertEqual(self.record()["client_id"], GOOGLE_DEVICE_CLIENT_ID)

        t = self.run_broker("token", "get", "g", "--force-refresh")
        self.assertEqual(t.returncode, 0, t.stderr)
        [refresh] = self.google_token_requests("refresh_token")
        self.assertEqual(refresh["status"], 200)
        self.assertEqual((refresh["form"]["client_id"], refresh["form"]["client_secret"]),
                         (GOOGLE_DEVICE_CLIENT_ID, GOOGLE_DEVICE_CLIENT_SECRET))
        self.assert_no_secret_leak(r, t, extra=SECRETS)

    def test_slow_down_and_googles_polling_statuses(self):
        """B27 for Google: pending (428), slow_down (403), pending, approved: the gaps grow by 5 s
        after slow_down and the login succeeds."""
        self.emu.script_device_polls(["authorization_pending", "slow_down", "authorization_pending"])
        r, dc = self.device_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        polls = self.google_token_requests(DEVICE_GRANT)
        self.assertEqual([e["status"] for e in polls], [428, 403, 428, 200])
        gaps = self.emu.poll_gaps(dc["user_code"])
        self.assertEqual(len(gaps), 3, gaps)
        for gap, expected in zip(gaps, [1, 6, 6]):
            self.assertGreaterEqual(gap, expected, gaps)

    def test_declined_device_code_exits_6(self):
        """B27: access_denied (Google's 403) stops polling: exit 6, nothing stored."""
        seen = len(self.emu.requests(endpoint="google.devicecode"))
        p = self.start_login("g")
        dc = self.wait_for_device_code(seen, endpoint="google.devicecode")
        self.emu.decline(dc["user_code"])
        r = self.finish(p)
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn(b"declined", r.stderr)
        self.assertEqual(self.keyring_items("g"), [])


if __name__ == "__main__":
    unittest.main()
