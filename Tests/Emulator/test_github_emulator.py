"""Self-test of the emulator's GitHub endpoints (idp/github.py): each behaviour it takes from
GitHub's documentation, as a client sees it over HTTPS.

Run from the repository root: python3 -m unittest Tests/Emulator/test_github_emulator.py
"""

import base64
import hashlib
import json
import os
import sys
import tempfile
import time
import unittest
from urllib.parse import parse_qs, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from idp_emulator import Emulator  # noqa: E402
from test_emulator import Client  # noqa: E402

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
APP = "Iv1.0123456789abcdef"
JSON = {"Accept": "application/json"}


class GitHubEmulatorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="gh-selftest-")
        self.emu = Emulator(https=True, cert_dir=self.tmp.name, device_code_interval=1).start()
        self.emu.set_user("octocat")
        self.client = Client(self.emu)

    def tearDown(self):
        self.emu.stop()
        self.tmp.cleanup()

    def form(self, path, fields, headers=None):
        """(status, content type, fields) of a POST, whatever the reply's format."""
        status, h, body = self.client.request(path, form=fields, headers=headers)
        ctype = h.get("Content-Type", "")
        if ctype.startswith("application/json"):
            return status, ctype, json.loads(body)
        return status, ctype, {k: v[0] for k, v in parse_qs(body).items()}

    def device(self, headers=JSON):
        status, _, body = self.form("/login/device/code", {"client_id": APP, "scope": "repo gist"}, headers)
        self.assertEqual(status, 200, body)
        return body

    def poll(self, dc, headers=JSON):
        return self.form("/login/oauth/access_token",
                         {"client_id": APP, "device_code": dc["device_code"], "grant_type": DEVICE_GRANT}, headers)

    def signed_in(self):
        dc = self.device()
        self.emu.approve(dc["user_code"])
        status, _, body = self.poll(dc)
        self.assertEqual(status, 200)
        return body

    def refresh(self, rt, **extra):
        return self.form("/login/oauth/access_token",
                         {"client_id": APP, "grant_type": "refresh_token", "refresh_token": rt, **extra}, JSON)

    def test_replies_are_form_encoded_unless_json_is_asked(self):
        """[OAUTH] the device code reply form-encoded by default, JSON with Accept: application/json."""
        status, ctype, body = self.form("/login/device/code", {"client_id": APP, "scope": "repo"})
        self.assertEqual((status, ctype.split(";")[0]), (200, "application/x-www-form-urlencoded"))
        self.assertEqual(body["expires_in"], "900")
        self.assertRegex(body["user_code"], r"^[A-Z0-9]{4}-[A-Z0-9]{4}$")
        self.assertEqual(body["verification_uri"], self.emu.base_url + "/login/device")
        status, ctype, body = self.form("/login/device/code", {"client_id": APP, "scope": "repo"}, JSON)
        self.assertEqual((status, ctype.split(";")[0], body["expires_in"]), (200, "application/json", 900))

    def test_device_flow_disabled_on_the_device_request(self):
        self.emu.github.configure(device_flow=False)
        status, _, body = self.form("/login/device/code", {"client_id": APP}, JSON)
        self.assertEqual((status, body["error"]), (400, "device_flow_disabled"))

    def test_polling_errors_come_with_http_200(self):
        """[TROUBLE] authorization_pending, and slow_down for a poll within the interval, adding
        5 s to it and naming the new interval; access_denied after a decline."""
        dc = self.device()
        status, _, body = self.poll(dc)
        self.assertEqual((status, body["error"]), (200, "authorization_pending"))
        status, _, body = self.poll(dc)  # at once: within the 1 s interval
        self.assertEqual((status, body["error"], body["interval"]), (200, "slow_down", 6))
        self.emu.decline(dc["user_code"])
        time.sleep(6.1)
        status, _, body = self.poll(dc)
        self.assertEqual((status, body["error"]), (200, "access_denied"))
        self.assertEqual([p["answer"] for p in self.emu.device_polls(dc["user_code"])],
                         ["authorization_pending", "slow_down", "authorization_declined"])

    def test_expired_device_code(self):
        self.emu.configure(device_code_expires_in=1)
        dc = self.device()
        time.sleep(1.1)
        status, _, body = self.poll(dc)
        self.assertEqual((status, body["error"]), (200, "expired_token"))
        status, _, body = self.form("/login/oauth/access_token",
                                    {"client_id": APP, "device_code": "nope", "grant_type": DEVICE_GRANT}, JSON)
        self.assertEqual((status, body["error"]), (200, "incorrect_device_code"))

    def test_expiring_tokens_rotate_and_the_used_pair_dies(self):
        """[REFRESH] expires_in 28800, a ghr_ refresh token with refresh_token_expires_in; a
        refresh returns a new pair, after which the old refresh token is bad_refresh_token (HTTP
        200) and the old access token no longer works. [FORMATS] ghu_/ghr_ prefixes; [OAUTH]
        scope comma-separated, token_type bearer."""
        first = self.signed_in()
        self.assertTrue(first["access_token"].startswith("ghu_"), first)
        self.assertTrue(first["refresh_token"].startswith("ghr_"), first)
        self.assertEqual((first["expires_in"], first["refresh_token_expires_in"]), (28800, 15897600))
        self.assertEqual((first["scope"], first["token_type"]), ("repo,gist", "bearer"))
        self.assertTrue(self.emu.validate_access_token(first["access_token"]))
        status, _, second = self.refresh(first["refresh_token"])
        self.assertEqual(status, 200, second)
        self.assertNotEqual(second["refresh_token"], first["refresh_token"])
        self.assertIsNone(self.emu.validate_access_token(first["access_token"]))
        self.assertTrue(self.emu.validate_access_token(second["access_token"]))
        status, _, again = self.refresh(first["refresh_token"])
        self.assertEqual((status, again["error"]), (200, "bad_refresh_token"))

    def test_refresh_wants_the_secret_unless_the_grant_came_from_the_device_flow(self):
        """[REFRESH] client_secret required unless the token came from the device flow."""
        self.emu.github.configure(secrets={APP: "s3cret"})
        first = self.signed_in()
        status, _, body = self.refresh(first["refresh_token"])
        self.assertEqual(status, 200, body)
        self.emu.configure(auto_consent=True)
        code, verifier = self.browser_code()
        status, _, body = self.form("/login/oauth/access_token", {
            "client_id": APP, "client_secret": "s3cret", "code": code, "redirect_uri": "http://127.0.0.1:9/",
            "code_verifier": verifier}, JSON)
        self.assertEqual(status, 200, body)
        status, _, bad = self.refresh(body["refresh_token"])
        self.assertEqual(bad["error"], "incorrect_client_credentials")
        status, _, good = self.refresh(body["refresh_token"], client_secret="s3cret")
        self.assertIn("access_token", good)

    def browser_code(self):
        verifier = "v" * 50
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        status, headers, _ = self.client.request(
            "/login/oauth/authorize?client_id=%s&redirect_uri=http://127.0.0.1:9/&scope=repo&state=S"
            "&code_challenge=%s&code_challenge_method=S256" % (APP, challenge))
        self.assertEqual(status, 302)
        query = parse_qs(urlsplit(headers["Location"]).query)
        return query["code"][0], verifier

    def test_code_redemption_errors(self):
        """[TROUBLE] bad_verification_code (a used code) and redirect_uri_mismatch, with HTTP 200."""
        self.emu.configure(auto_consent=True)
        code, verifier = self.browser_code()
        fields = {"client_id": APP, "code": code, "redirect_uri": "http://127.0.0.1:9/", "code_verifier": verifier}
        status, _, body = self.form("/login/oauth/access_token", dict(fields, redirect_uri="http://127.0.0.1:8/"), JSON)
        self.assertEqual((status, body["error"]), (200, "redirect_uri_mismatch"))
        code, verifier = self.browser_code()
        fields.update(code=code, code_verifier=verifier)
        self.assertEqual(self.form("/login/oauth/access_token", fields, JSON)[0], 200)
        status, _, body = self.form("/login/oauth/access_token", fields, JSON)
        self.assertEqual((status, body["error"]), (200, "bad_verification_code"))

    def test_tokens_without_expiry(self):
        """[REFRESH] an app without expiring tokens: gho_ token, no expires_in, no refresh_token."""
        self.emu.github.configure(expiring=False)
        body = self.signed_in()
        self.assertTrue(body["access_token"].startswith("gho_"), body)
        self.assertNotIn("expires_in", body)
        self.assertNotIn("refresh_token", body)

    def test_the_user_endpoint(self):
        """[USER] login for a valid bearer token, 401 Bad credentials otherwise."""
        token = self.signed_in()["access_token"]
        status, _, body = self.client.request("/api/v3/user", headers={"Authorization": "Bearer " + token})
        self.assertEqual((status, json.loads(body)["login"]), (200, "octocat"))
        status, _, body = self.client.request("/api/v3/user", headers={"Authorization": "Bearer nope"})
        self.assertEqual((status, json.loads(body)["message"]), (401, "Bad credentials"))


if __name__ == "__main__":
    unittest.main()
