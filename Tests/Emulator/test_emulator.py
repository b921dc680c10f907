"""Self-test of the identity provider emulator (stdlib unittest + urllib, over HTTPS).

Run from the repository root: python3 -m unittest Tests/Emulator/test_emulator.py
"""

import base64
import hashlib
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlencode, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from idp_emulator import Emulator, make_certs  # noqa: E402

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
CLIENT = "client-1"
SCOPE = "https://graph.microsoft.com/User.Read offline_access openid profile"
CERTS = tempfile.TemporaryDirectory(prefix="idp-selftest-")


def setUpModule():
    make_certs(CERTS.name)


def tearDownModule():
    CERTS.cleanup()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


class Client:
    """A tiny HTTP client that trusts the emulator's CA and never follows redirects."""

    def __init__(self, emu):
        self.emu = emu
        context = ssl.create_default_context(cafile=emu.ca_file) if emu.ca_file else None
        self.opener = urllib.request.build_opener(_NoRedirect,
                                                  urllib.request.HTTPSHandler(context=context))

    def request(self, path, form=None, json_body=None, headers=None):
        """Returns (status, headers, body text)."""
        data = None
        headers = dict(headers or {})
        if form is not None:
            data = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif json_body is not None:
            data = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.emu.base_url + path, data=data, headers=headers)
        try:
            with self.opener.open(req, timeout=10) as resp:
                return resp.status, resp.headers, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def post(self, path, form, headers=None):
        status, _, body = self.request(path, form=form, headers=headers)
        return status, json.loads(body)

    def token(self, headers=None, **form):
        return self.post("/organizations/oauth2/v2.0/token", {"client_id": CLIENT, **form}, headers)

    def device_code(self, scope=SCOPE):
        status, body = self.post("/organizations/oauth2/v2.0/devicecode",
                                 {"client_id": CLIENT, "scope": scope})
        assert status == 200, body
        return body

    def poll(self, device_code):
        return self.token(grant_type=DEVICE_GRANT, device_code=device_code)

    def control(self, path, body=None):
        if body is None:
            status, _, text = self.request("/_control" + path)
        else:
            status, _, text = self.request("/_control" + path, json_body=body)
        return status, json.loads(text)

    def sign_in(self):
        """Device code sign-in; returns the token response."""
        dc = self.device_code()
        self.emu.approve(dc["user_code"])
        status, body = self.poll(dc["device_code"])
        assert status == 200, body
        return body


def _claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class EmulatorTest(unittest.TestCase):
    options = {}

    def setUp(self):
        self.emu = Emulator(https=True, cert_dir=CERTS.name, device_code_interval=0,
                            **self.options).start()
        self.addCleanup(self.emu.stop)
        self.client = Client(self.emu)


class DeviceCodeTest(EmulatorTest):
    def test_pending_then_approved(self):
        dc = self.client.device_code()
        self.assertEqual(set(dc), {"user_code", "device_code", "verification_uri", "expires_in",
                                   "interval", "message"})
        self.assertEqual(dc["expires_in"], 900)
        self.assertIn(dc["user_code"], dc["message"])
        status, body = self.client.poll(dc["device_code"])
        self.assertEqual((status, body["error"], body["error_codes"]),
                         (400, "authorization_pending", [70016]))
        self.assertTrue(body["error_description"].startswith("AADSTS70016: "))
        status, approved = self.client.control("/device/approve", {})  # the latest pending code
        self.assertEqual((status, approved["status"]), (200, "approved"))
        status, body = self.client.poll(dc["device_code"])
        self.assertEqual(status, 200, body)
        self.assertEqual(body["token_type"], "Bearer")
        self.assertEqual(body["scope"], "https://graph.microsoft.com/User.Read openid profile")
        self.assertTrue(body["access_token"].startswith("AT-") and body["refresh_token"])
        claims = _claims(body["id_token"])
        self.assertEqual((claims["aud"], claims["preferred_username"], claims["ver"]),
                         (CLIENT, "user1@example.test", "2.0"))
        self.assertEqual(claims["iss"], f"{self.emu.base_url}/{claims['tid']}/v2.0")
        self.assertNotIn("client_info", body)  # only when the request says client_info=1
        self.assertEqual(self.emu.validate_access_token(body["access_token"])["username"],
                         "user1@example.test")
        status, body = self.client.poll(dc["device_code"])
        self.assertEqual(body["error"], "invalid_grant")  # a device code is redeemed once

    def test_declined_expired_unknown(self):
        dc = self.client.device_code()
        self.emu.decline(dc["user_code"])
        self.assertEqual(self.client.poll(dc["device_code"])[1]["error"], "authorization_declined")
        self.emu.configure(device_code_expires_in=0)
        self.assertEqual(self.client.poll(self.client.device_code()["device_code"])[1]["error"],
                         "expired_token")
        self.assertEqual(self.client.poll("DC-nope")[1]["error"], "bad_verification_code")

    def test_scripted_slow_down_and_poll_times(self):
        self.emu.script_device_polls(["authorization_pending", "slow_down",
                                      {"error": "slow_down", "interval": 15},
                                      "authorization_pending", "success"])
        dc = self.client.device_code()
        answers = []
        for _ in range(5):
            time.sleep(0.05)
            status, body = self.client.poll(dc["device_code"])
            answers.append(body)
        self.assertEqual([b.get("error", "success") for b in answers],
                         ["authorization_pending", "slow_down", "slow_down",
                          "authorization_pending", "success"])
        self.assertEqual(answers[2]["interval"], 15)
        self.assertIn("access_token", answers[4])
        gaps = self.emu.poll_gaps(dc["user_code"])
        self.assertEqual(len(gaps), 4)
        self.assertTrue(all(g >= 0.05 for g in gaps), gaps)
        status, info = self.client.control("/device?user_code=" + dc["user_code"])
        self.assertEqual([p["answer"] for p in info["polls"]][-1], "success")

    def test_auto_approve(self):
        self.emu.configure(auto_approve=0)
        self.assertEqual(self.client.poll(self.client.device_code()["device_code"])[0], 200)


class RefreshTest(EmulatorTest):
    def refresh(self, rt, scope=SCOPE, headers=None, **extra):
        return self.client.token(headers, grant_type="refresh_token", refresh_token=rt, scope=scope,
                                 **extra)

    def test_rotation_and_azure_reuse(self):
        rt1 = self.client.sign_in()["refresh_token"]
        status, body = self.refresh(rt1, client_info="1")
        self.assertEqual(status, 200, body)
        self.assertEqual(body["expires_in"], 3600)
        self.assertEqual(body["ext_expires_in"], 3600)
        rt2 = body["refresh_token"]
        self.assertNotEqual(rt1, rt2)
        info = json.loads(base64.urlsafe_b64decode(body["client_info"] + "=="))
        self.assertEqual(set(info), {"uid", "utid"})
        self.assertEqual(self.refresh(rt1)[0], 200)  # Azure accepts a rotated-away token

    def test_clock_offset_puts_every_time_on_the_providers_clock(self):
        """`clock_offset`: ID tokens' and JWT access tokens' `iat`/`exp` and a resource's judgement
        of an access token are on the provider's clock, `expires_in` is a duration on any;
        `id_token_lifetime` is `exp` − `iat` of ID tokens."""
        self.emu.configure(clock_offset=600, id_token_lifetime=60, azure_jwt_access_tokens=True)
        body = self.client.sign_in()
        claims = _claims(body["id_token"])
        self.assertEqual(claims["exp"] - claims["iat"], 60)
        self.assertAlmostEqual(claims["iat"], time.time() + 600, delta=5)
        self.assertAlmostEqual(_claims(body["access_token"])["exp"], time.time() + 600 + 3600, delta=5)
        self.assertEqual(body["expires_in"], 3600)
        self.emu.configure(clock_offset=0)
        status, body = self.refresh(body["refresh_token"])
        self.assertEqual(status, 200, body)
        self.assertAlmostEqual(_claims(body["id_token"])["iat"], time.time(), delta=5)
        self.assertIsNotNone(self.emu.validate_access_token(body["access_token"]))
        self.emu.configure(clock_offset=3601)  # the provider's clock past the token's exp
        self.assertIsNone(self.emu.validate_access_token(body["access_token"]))

    def test_strict_reuse_and_family_revocation(self):
        self.emu.configure(refresh_token_reuse="reject")
        rt1 = self.client.sign_in()["refresh_token"]
        rt2 = self.refresh(rt1)[1]["refresh_token"]
        status, body = self.refresh(rt1)
        self.assertEqual((status, body["error"]), (400, "invalid_grant"))
        self.assertEqual(self.refresh(rt2)[0], 200)  # strict rotation alone spares the family
        self.emu.configure(refresh_token_reuse="revoke-family")
        rt4 = self.client.sign_in()["refresh_token"]
        rt5 = self.refresh(rt4)[1]["refresh_token"]
        self.assertEqual(self.refresh(rt4)[1]["error"], "invalid_grant")
        self.assertEqual(self.refresh(rt5)[1]["error_codes"], [50173])

    def test_concurrent_redemption_under_strict_rotation(self):
        self.emu.configure(refresh_token_reuse="reject")
        rt = self.client.sign_in()["refresh_token"]
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda _: self.refresh(rt)[0], range(8)))
        self.assertEqual(sorted(statuses), [200] + [400] * 7)

    def test_reply_modes_and_offline_access(self):
        rt = self.client.sign_in()["refresh_token"]
        self.emu.configure(refresh_token_mode="omit")
        self.assertNotIn("refresh_token", self.refresh(rt)[1])
        self.emu.configure(refresh_token_mode="empty")
        self.assertEqual(self.refresh(rt)[1]["refresh_token"], "")
        self.emu.configure(refresh_token_mode="same")
        self.assertEqual(self.refresh(rt)[1]["refresh_token"], rt)
        self.emu.configure(refresh_token_mode="rotate")
        body = self.refresh(rt, scope="https://graph.microsoft.com/User.Read")[1]
        self.assertNotIn("refresh_token", body)  # no offline_access, no refresh token
        self.assertNotIn("id_token", body)       # no openid, no ID token

    def test_revoked_token_body_shape(self):
        rt = self.emu.add_refresh_token("RT1", client_id=CLIENT)
        self.assertEqual(self.refresh(rt)[0], 200)
        status, revoked = self.client.control("/revoke", {"token": "RT1"})
        self.assertEqual(revoked["revoked"], 2)  # RT1 and the one it rotated into
        status, body = self.refresh(rt, headers={"client-request-id": "corr-42"})
        self.assertEqual(status, 400)
        self.assertEqual(set(body), {"error", "error_description", "error_codes", "timestamp",
                                     "trace_id", "correlation_id", "error_uri"})
        self.assertEqual((body["error"], body["error_codes"], body["correlation_id"]),
                         ("invalid_grant", [50173], "corr-42"))
        lines = body["error_description"].split("\r\n")
        self.assertTrue(lines[0].startswith("AADSTS50173: The provided grant has expired"))
        self.assertEqual([line.split(":")[0] for line in lines[1:]],
                         ["Trace ID", "Correlation ID", "Timestamp"])
        self.assertRegex(body["timestamp"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$")
        self.assertEqual(body["error_uri"], f"{self.emu.base_url}/error?code=50173")
        self.assertEqual(self.refresh("never-issued")[1]["error_codes"], [50173])

    def test_mfa_and_consent_switches(self):
        rt = self.client.sign_in()["refresh_token"]
        self.emu.set_user_flags(mfa_required=True)
        body = self.refresh(rt)[1]
        self.assertEqual((body["error"], body["error_codes"], body["suberror"]),
                         ("interaction_required", [50076], "basic_action"))
        self.emu.set_user_flags(mfa_required=False, consent_required=True)
        body = self.refresh(rt)[1]
        self.assertEqual((body["error"], body["error_codes"], body["suberror"]),
                         ("invalid_grant", [65001], "consent_required"))

    def test_step_up_for_one_resource_until_a_sign_in_asks_for_it(self):
        rt = self.client.sign_in()["refresh_token"]
        self.emu.set_user_flags(step_up_resources=["https://vault.azure.net"])
        vault = "https://vault.azure.net/.default offline_access"
        body = self.refresh(rt, scope=vault)[1]
        self.assertEqual((body["error"], body["error_codes"], body["suberror"]),
                         ("interaction_required", [50076], "basic_action"))
        self.assertIn("capolids", json.loads(body["claims"])["access_token"])
        rt2 = self.refresh(rt)[1]["refresh_token"]  # other resources still refresh
        self.assertEqual(self.refresh(rt2, scope=vault)[1]["error"], "interaction_required")
        dc = self.client.device_code(scope=vault + " openid profile")
        self.emu.approve(dc["user_code"])
        stepped = self.client.poll(dc["device_code"])[1]["refresh_token"]
        status, body = self.refresh(stepped, scope=vault)
        self.assertEqual(status, 200, body)
        self.assertEqual(self.refresh(body["refresh_token"], scope=vault)[0], 200)  # kept on rotation

    def test_request_errors(self):
        status, body = self.client.post("/common/oauth2/v2.0/token", {"grant_type": "refresh_token"})
        self.assertEqual((status, body["error"], body["error_codes"]),
                         (400, "invalid_request", [900144]))
        self.assertEqual(self.client.token(grant_type="password")[1]["error"],
                         "unsupported_grant_type")
        self.assertEqual(self.client.token(grant_type="refresh_token", refresh_token="x",
                                           scope=SCOPE, client_secret="s")[0], 401)


class AuthCodeTest(EmulatorTest):
    options = {"auto_consent": True}

    def authorize(self, verifier):
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
        query = urlencode({"client_id": CLIENT, "response_type": "code", "scope": SCOPE,
                           "redirect_uri": "http://localhost:5123/cb", "state": "s-1",
                           "code_challenge": challenge.decode(), "code_challenge_method": "S256"})
        status, headers, _ = self.client.request("/organizations/oauth2/v2.0/authorize?" + query)
        self.assertEqual(status, 302)
        location = urlsplit(headers["Location"])
        self.assertEqual(location.netloc + location.path, "localhost:5123/cb")
        params = parse_qs(location.query)
        self.assertEqual(params["state"], ["s-1"])
        return params["code"][0]

    def redeem(self, code, verifier):
        return self.client.token(grant_type="authorization_code", code=code, code_verifier=verifier,
                                 redirect_uri="http://localhost:5123/cb")

    def test_pkce(self):
        code = self.authorize("v" * 43)
        self.assertEqual(self.redeem(code, "w" * 43)[1]["error_codes"], [501481])
        code = self.authorize("v" * 43)
        status, body = self.redeem(code, "v" * 43)
        self.assertEqual(status, 200, body)
        self.assertIn("refresh_token", body)
        self.assertEqual(self.redeem(code, "v" * 43)[1]["error_codes"], [54005])

    def test_consent_page_without_auto_consent(self):
        self.emu.configure(auto_consent=False)
        query = urlencode({"client_id": CLIENT, "response_type": "code", "scope": SCOPE,
                           "redirect_uri": "http://localhost:5123/cb"})
        status, headers, text = self.client.request("/common/oauth2/v2.0/authorize?" + query)
        self.assertEqual(status, 200)
        self.assertIn("<form", text)


class DiscoveryTest(EmulatorTest):
    def test_openid_configuration(self):
        status, _, text = self.client.request("/contoso.com/v2.0/.well-known/openid-configuration")
        config = json.loads(text)
        tid = self.emu.options.tenant_id
        self.assertEqual(config["issuer"], f"{self.emu.base_url}/{tid}/v2.0")
        self.assertEqual(config["device_authorization_endpoint"],
                         f"{self.emu.base_url}/{tid}/oauth2/v2.0/devicecode")
        common = json.loads(self.client.request("/common/v2.0/.well-known/openid-configuration")[2])
        self.assertEqual(common["issuer"], self.emu.base_url + "/{tenantid}/v2.0")
        self.assertEqual(common["token_endpoint"], self.emu.base_url + "/common/oauth2/v2.0/token")


class FaultTest(EmulatorTest):
    def test_503_with_retry_after_then_normal(self):
        self.emu.add_fault("status", endpoint="devicecode", status=503, retry_after=7, count=2)
        for _ in range(2):
            status, headers, _ = self.client.request("/common/oauth2/v2.0/devicecode",
                                                     form={"client_id": CLIENT, "scope": SCOPE})
            self.assertEqual((status, headers["Retry-After"]), (503, "7"))
        self.assertIn("user_code", self.client.device_code())
        self.assertEqual([r["fault"] for r in self.emu.requests(endpoint="devicecode")],
                         ["status", "status", None])

    def test_html_invalid_json_drop_delay(self):
        self.client.control("/faults", {"faults": [
            {"kind": "html", "endpoint": "token"},
            {"kind": "invalid_json", "endpoint": "token"},
            {"kind": "drop", "endpoint": "token"},
            {"kind": "delay", "endpoint": "token", "seconds": 0.3}]})
        status, headers, text = self.client.request("/common/oauth2/v2.0/token", form={})
        self.assertEqual((status, headers["Content-Type"].split(";")[0]), (502, "text/html"))
        self.assertIn("Bad Gateway", text)
        status, _, text = self.client.request("/common/oauth2/v2.0/token", form={})
        self.assertEqual(status, 200)
        self.assertRaises(ValueError, json.loads, text)
        with self.assertRaises((urllib.error.URLError, ConnectionError, OSError)):
            self.client.request("/common/oauth2/v2.0/token", form={})
        started = time.monotonic()
        status, _, _ = self.client.request("/common/oauth2/v2.0/token", form={})
        self.assertGreaterEqual(time.monotonic() - started, 0.3)
        self.assertEqual(status, 400)  # answered normally after the delay
        self.assertEqual(self.emu.pending_faults(), [])

    def test_scripted_json_body(self):
        body = {"error": "invalid_grant", "error_description": "AADSTS50173: token RT-x was revoked"}
        self.emu.add_fault("json", endpoint="token", body=body, retry_after=3)
        self.client.control("/faults", {"kind": "json", "endpoint": "token", "status": 500,
                                        "body": {"error": "server_error"}})
        status, headers, text = self.client.request("/common/oauth2/v2.0/token", form={})
        self.assertEqual((status, headers["Retry-After"], json.loads(text)), (400, "3", body))
        status, _, text = self.client.request("/common/oauth2/v2.0/token", form={})
        self.assertEqual((status, json.loads(text)), (500, {"error": "server_error"}))
        self.assertEqual([r["fault"] for r in self.emu.requests(endpoint="token")], ["json", "json"])
        with self.assertRaises(ValueError):
            self.emu.add_fault("json", endpoint="token")

    def test_redirect_fault_and_json_content_type(self):
        """X06: a redirect fault answers status + Location (never the real reply); a json fault
        may name its Content-Type (text/plain JSON)."""
        gw = "http://127.0.0.1:9/auD?origurl=x"
        for status in (302, 307, 308):
            self.emu.add_fault("redirect", endpoint="token", status=status, location=gw)
            got, headers, text = self.client.request("/common/oauth2/v2.0/token", form={})
            self.assertEqual((got, headers["Location"]), (status, gw))
            self.assertIn("<html>", text)
        self.emu.add_fault("json", endpoint="token", status=200, body={"a": 1}, content_type="text/plain")
        got, headers, text = self.client.request("/common/oauth2/v2.0/token", form={})
        self.assertEqual((got, headers["Content-Type"], json.loads(text)), (200, "text/plain", {"a": 1}))
        self.assertEqual([r["fault"] for r in self.emu.requests(endpoint="token")], ["redirect"] * 3 + ["json"])
        with self.assertRaises(ValueError):
            self.emu.add_fault("redirect", endpoint="token")

    def test_confidential_clients_must_present_their_secret(self):
        """X05: a client in `confidential_clients` authenticates with Basic (or client_secret);
        a rotated secret is 401 invalid_client AADSTS7000215 and the refresh token still works
        with the new one; a public client presenting a secret is AADSTS700025."""
        self.emu.configure(confidential_clients={CLIENT: "S3CR3T"})
        basic = {"Authorization": "Basic " + base64.b64encode(f"{CLIENT}:S3CR3T".encode()).decode()}
        status, dc = self.client.post("/organizations/oauth2/v2.0/devicecode", {"scope": SCOPE}, basic)
        self.emu.approve(dc["user_code"])
        status, body = self.client.post("/organizations/oauth2/v2.0/token",
                                        {"grant_type": DEVICE_GRANT, "device_code": dc["device_code"]}, basic)
        self.assertEqual(status, 200, body)
        rt = body["refresh_token"]
        self.emu.configure(confidential_clients={CLIENT: "N3W"})
        status, body = self.client.post("/organizations/oauth2/v2.0/token",
                                        {"grant_type": "refresh_token", "refresh_token": rt, "scope": SCOPE}, basic)
        self.assertEqual((status, body["error"], body["error_codes"]), (401, "invalid_client", [7000215]))
        status, body = self.client.token(grant_type="refresh_token", refresh_token=rt, scope=SCOPE,
                                         client_secret="N3W")
        self.assertEqual(status, 200, body)
        self.emu.configure(confidential_clients=None)
        status, body = self.client.token(grant_type="refresh_token", refresh_token=rt, scope=SCOPE, headers=basic)
        self.assertEqual((status, body["error_codes"]), (401, [700025]))

    def test_an_html_fault_serves_the_page_it_is_given(self):
        """X06: an html fault with `body` answers that page as text/html, with its status."""
        self.emu.add_fault("html", endpoint="token", status=200, body="<html><p>Zscaler \x1b[31m</p></html>")
        status, headers, text = self.client.request("/common/oauth2/v2.0/token", form={})
        self.assertEqual((status, headers["Content-Type"].split(";")[0]), (200, "text/html"))
        self.assertEqual(text, "<html><p>Zscaler \x1b[31m</p></html>")

    def test_public_device_clients_refuse_a_secret_at_the_device_endpoint(self):
        """X05: a `public_device_clients` entry asking for a device code with a secret (Basic or
        `client_secret`) gets 403 unauthorized_client, as Auth0 answers; without one, a code."""
        self.emu.configure(public_device_clients=[CLIENT])
        basic = {"Authorization": "Basic " + base64.b64encode(f"{CLIENT}:S3CR3T".encode()).decode()}
        for form, headers in (({"scope": SCOPE}, basic), ({"scope": SCOPE, "client_id": CLIENT,
                                                            "client_secret": "S3CR3T"}, {})):
            status, body = self.client.post("/organizations/oauth2/v2.0/devicecode", form, headers)
            self.assertEqual((status, body["error"]), (403, "unauthorized_client"))
        status, body = self.client.post("/organizations/oauth2/v2.0/devicecode", {"scope": SCOPE, "client_id": CLIENT})
        self.assertEqual(status, 200, body)
        self.assertIn("device_code", body)

    def test_request_loop_and_extra_headers(self):
        """X07: Entra's AADSTS50196 throttle body, and any header on a faulty answer (an
        HTTP-date `Retry-After`, Okta's `X-Rate-Limit-Reset`)."""
        self.emu.add_fault("request_loop", endpoint="token")
        self.emu.add_fault("html", endpoint="token", status=429,
                           headers={"Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT", "X-Rate-Limit-Reset": 42})
        status, headers, text = self.client.request("/common/oauth2/v2.0/token", form={})
        body = json.loads(text)
        self.assertEqual((status, body["error"], body["error_codes"]), (400, "invalid_grant", [50196]))
        self.assertTrue(body["error_description"].startswith("AADSTS50196: "))
        self.assertNotIn("Retry-After", headers)
        status, headers, _ = self.client.request("/common/oauth2/v2.0/token", form={})
        self.assertEqual((status, headers["Retry-After"], headers["X-Rate-Limit-Reset"]),
                         (429, "Sun, 06 Nov 1994 08:49:37 GMT", "42"))
        self.assertEqual(headers["Content-Type"].split(";")[0], "text/html")

    def test_per_scope_refusal_with_any_error_codes_and_suberror(self):
        """Conditional Access refusing one resource (AADSTS530003 as `invalid_grant`, no
        suberror): only refreshes for that resource's scopes are refused, in Entra's shape; the
        same grant still serves other resources; `suberror` and `claims` appear only when given."""
        rt = self.client.sign_in()["refresh_token"]
        self.emu.add_fault("refusal", endpoint="token", grant_type="refresh_token", count=2,
                           scope="https://graph.microsoft.com", error_codes=[530003],
                           error_description="AADSTS530003: Your device is required to be managed to access "
                                             "this resource.")
        self.emu.add_fault("refusal", endpoint="token", scope="https://vault.azure.net/.default",
                           error="interaction_required", error_codes=[50131, 53000], suberror="basic_action",
                           status=400)
        status, body = self.client.token(grant_type="refresh_token", refresh_token=rt,
                                         scope="https://graph.microsoft.com/User.Read offline_access")
        self.assertEqual((status, body["error"], body["error_codes"]), (400, "invalid_grant", [530003]))
        self.assertTrue(body["error_description"].startswith("AADSTS530003: Your device is required"))
        self.assertIn("\r\nTrace ID: ", body["error_description"])
        self.assertNotIn("suberror", body)
        self.assertNotIn("claims", body)
        self.assertEqual(body["error_uri"], "https://login.microsoftonline.com/error?code=530003")
        ok, devops = self.client.token(grant_type="refresh_token", refresh_token=rt,
                                       scope="499b84ac-1321-427f-aa17-267ca6975798/.default offline_access")
        self.assertEqual(ok, 200, devops)
        status, body = self.client.token(grant_type="refresh_token", refresh_token=devops["refresh_token"],
                                         scope="https://vault.azure.net/.default offline_access")
        self.assertEqual((status, body["error"], body["error_codes"], body["suberror"]),
                         (400, "interaction_required", [50131, 53000], "basic_action"))
        self.assertTrue(body["error_description"].startswith("AADSTS50131: "))
        status, body = self.client.token(grant_type="refresh_token", refresh_token=devops["refresh_token"],
                                         scope="https://graph.microsoft.com/.default offline_access")
        self.assertEqual((status, body["error_codes"]), (400, [530003]))
        self.assertEqual(self.emu.pending_faults(), [])
        # Device-code polls are token requests too: a refusal after approval (Y10's shape).
        self.emu.add_fault("refusal", endpoint="token", grant_type=DEVICE_GRANT, error_codes=[53003])
        dc = self.client.device_code()
        self.emu.approve(dc["user_code"])
        status, body = self.client.poll(dc["device_code"])
        self.assertEqual((status, body["error"], body["error_codes"]), (400, "invalid_grant", [53003]))

    def test_grant_type_filter(self):
        self.emu.add_fault("status", endpoint="token", grant_type="refresh_token")
        dc = self.client.device_code()
        self.assertEqual(self.client.poll(dc["device_code"])[0], 400)  # not faulted
        self.assertEqual(len(self.emu.pending_faults()), 1)


class LogAndControlTest(EmulatorTest):
    def test_request_log_and_introspection(self):
        body = self.client.sign_in()
        polls = self.emu.requests(grant_type=DEVICE_GRANT)
        self.assertEqual(len(polls), 1)
        self.assertEqual(polls[0]["form"]["client_id"], CLIENT)
        self.assertIn("user-agent", polls[0]["headers"])
        self.assertEqual(polls[0]["response"]["access_token"], body["access_token"])
        status, listed = self.client.control("/requests?path_contains=devicecode")
        self.assertEqual(len(listed["requests"]), 1)
        status, info = self.client.control("/introspect?token=" + body["access_token"])
        self.assertTrue(info["active"])
        self.assertEqual(self.client.control("/introspect?token=AT-x")[1], {"active": False})

    def test_introspection_can_require_a_scope(self):
        """A resource server that takes only its own scope (a mail server: Exchange Online's
        IMAP scope) sees another resource's token as inactive."""
        token = self.client.sign_in()["access_token"]
        scope = self.emu.validate_access_token(token)["scope"].split()[0]
        self.assertTrue(self.client.control("/introspect?scope=%s&token=%s" % (scope, token))[1]["active"])
        other = "https://outlook.office.com/IMAP.AccessAsUser.All"
        self.assertEqual(self.client.control("/introspect?scope=%s&token=%s" % (other, token))[1], {"active": False})

    def test_jwt_access_tokens_carry_entras_claims(self):
        self.emu.configure(azure_jwt_access_tokens=True)
        body = self.client.sign_in()
        claims = _claims(body["access_token"])
        self.assertEqual(claims["tid"], self.emu.validate_access_token(body["access_token"])["tid"])
        self.assertEqual(claims["exp"], self.emu.validate_access_token(body["access_token"])["exp"])

    def test_control_user_reset_and_errors(self):
        status, user = self.client.control("/user", {"username": "user2@example.test",
                                                     "oid": "oid-2"})
        self.assertEqual((status, user["oid"]), (200, "oid-2"))
        body = self.client.sign_in()
        self.assertEqual(_claims(body["id_token"])["preferred_username"], "user2@example.test")
        self.assertEqual(self.client.control("/device/approve", {})[0], 404)  # nothing pending
        self.assertEqual(self.client.control("/options", {"no_such": 1})[0], 400)
        self.assertEqual(self.client.control("/reset", {})[0], 200)
        self.assertEqual(self.emu.requests(), [])
        self.assertEqual(self.emu.store.user().username, "user1@example.test")


class GoogleTest(EmulatorTest):
    options = {"auto_consent": True}
    secret = {"client_id": "g-client", "client_secret": "g-secret"}

    def google_token(self, **form):
        return self.client.post("/google/token", {**self.secret, **form})

    def device_sign_in(self):
        status, dc = self.client.post("/google/device/code",
                                      {"client_id": "g-client", "scope": "openid email"})
        self.assertIn("verification_url", dc)
        self.assertNotIn("verification_uri", dc)
        status, body = self.google_token(grant_type=DEVICE_GRANT, device_code=dc["device_code"])
        self.assertEqual((status, body["error"]), (428, "authorization_pending"))
        self.emu.approve(dc["user_code"])
        status, body = self.google_token(grant_type=DEVICE_GRANT, device_code=dc["device_code"])
        self.assertEqual(status, 200, body)
        return body

    def test_announced_refresh_token_lifetime_is_stated_and_enforced(self):
        """A "Testing" consent screen's 7-day refresh tokens: `refresh_token_expires_in` in the
        sign-in and refresh replies (counting down), nothing without the option, and after the
        time Google's `invalid_grant` "Token has been expired or revoked."."""
        self.emu.configure(refresh_token_lifetime=604799)
        self.assertNotIn("refresh_token_expires_in", self.device_sign_in())
        self.emu.configure(announce_refresh_token_lifetime=True)
        body = self.device_sign_in()
        self.assertIn(body["refresh_token_expires_in"], (604798, 604799))
        status, refreshed = self.google_token(grant_type="refresh_token", refresh_token=body["refresh_token"])
        self.assertEqual(status, 200, refreshed)
        self.assertLessEqual(refreshed["refresh_token_expires_in"], body["refresh_token_expires_in"])
        self.emu.configure(refresh_token_lifetime=0.3)
        short = self.device_sign_in()
        self.assertEqual(short["refresh_token_expires_in"], 0)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            status, dead = self.google_token(grant_type="refresh_token", refresh_token=short["refresh_token"])
            if status != 200:
                break
            time.sleep(0.05)
        self.assertEqual((status, dead["error"], dead["error_description"]),
                         (400, "invalid_grant", "Token has been expired or revoked."))

    def test_device_flow_refresh_without_rotation_and_revoke(self):
        body = self.device_sign_in()
        self.assertEqual(_claims(body["id_token"])["email"], "user1@example.test")
        status, refreshed = self.google_token(grant_type="refresh_token",
                                              refresh_token=body["refresh_token"])
        self.assertEqual(status, 200, refreshed)
        self.assertNotIn("refresh_token", refreshed)  # Google does not rotate
        status, _, text = self.client.request("/google/revoke?token=" + refreshed["access_token"],
                                              form={})
        self.assertEqual((status, json.loads(text)), (200, {}))
        status, dead = self.google_token(grant_type="refresh_token",
                                         refresh_token=body["refresh_token"])
        self.assertEqual((status, dead["error"]), (400, "invalid_grant"))
        self.assertIsNone(self.emu.validate_access_token(body["access_token"]))
        self.assertEqual(self.client.post("/google/revoke", {"token": "nope"})[0], 400)

    def test_iss_with_or_without_scheme(self):
        self.assertEqual(_claims(self.device_sign_in()["id_token"])["iss"], self.emu.base_url + "/google")
        self.emu.configure(google_iss_without_scheme=True)
        self.assertEqual(_claims(self.device_sign_in()["id_token"])["iss"],
                         "127.0.0.1:%d/google" % self.emu.port)

    def test_resource_manager_project_number(self):
        """projects.get: cloud-platform scope needed; projectNumber a string of digits; a
        project not in google_projects is 403, as for a project the caller cannot see."""
        def get(project, token):
            status, _, text = self.client.request("/google/resourcemanager/v1/projects/" + project,
                                                  headers={"Authorization": "Bearer " + token})
            return status, json.loads(text)
        self.assertEqual(get("p", "nope")[0], 401)
        self.assertEqual(get("p", self.device_sign_in()["access_token"])[0], 403)  # openid email only
        status, dc = self.client.post("/google/device/code", {
            "client_id": "g-client", "scope": "openid https://www.googleapis.com/auth/cloud-platform"})
        self.emu.approve(dc["user_code"])
        token = self.google_token(grant_type=DEVICE_GRANT, device_code=dc["device_code"])[1]["access_token"]
        status, doc = get("demo-proj", token)
        self.assertEqual(status, 200)
        self.assertTrue(doc["projectNumber"].isdigit() and len(doc["projectNumber"]) == 12, doc)
        self.assertEqual(get("demo-proj", token)[1], doc)
        self.emu.configure(google_projects={"demo-proj": 42})
        self.assertEqual(get("demo-proj", token)[1]["projectNumber"], "42")
        self.assertEqual(get("other", token)[0], 403)

    def test_client_secret_required(self):
        status, body = self.client.post("/google/token", {"client_id": "g-client",
                                                          "grant_type": "refresh_token",
                                                          "refresh_token": "x"})
        self.assertEqual((status, body["error_description"]), (400, "client_secret is missing."))

    def test_offline_refresh_token_only_on_first_consent(self):
        def sign_in(prompt=None):
            query = {"client_id": "g-client", "response_type": "code", "scope": "openid email",
                     "redirect_uri": "http://127.0.0.1:4711/", "access_type": "offline"}
            if prompt:
                query["prompt"] = prompt
            _, headers, _ = self.client.request("/google/o/oauth2/v2/auth?" + urlencode(query))
            code = parse_qs(urlsplit(headers["Location"]).query)["code"][0]
            return self.google_token(grant_type="authorization_code", code=code,
                                     redirect_uri="http://127.0.0.1:4711/")[1]
        self.assertIn("refresh_token", sign_in())
        self.assertNotIn("refresh_token", sign_in())
        self.assertIn("refresh_token", sign_in(prompt="consent"))

    def test_tokeninfo_and_userinfo(self):
        token = self.device_sign_in()["access_token"]
        status, _, text = self.client.request("/google/tokeninfo?access_token=" + token)
        self.assertEqual(json.loads(text)["email"], "user1@example.test")
        status, _, text = self.client.request("/google/v1/userinfo",
                                              headers={"Authorization": "Bearer " + token})
        self.assertEqual((status, json.loads(text)["email_verified"]), (200, True))
        self.assertEqual(self.client.request("/google/v1/userinfo")[0], 401)


class GenericOIDCTest(EmulatorTest):
    """The generic OpenID Provider (idp/oidc.py) that bug-cases-3 X01 and X04 need."""
    options = {"auto_consent": True, "refresh_token_reuse": "reject"}

    def sign_in(self, path="/application/o/app"):
        status, dc = self.client.post(path + "/oidc/device", {"client_id": "cli", "scope": "openid offline_access"})
        self.assertEqual(status, 200, dc)
        self.emu.approve(dc["user_code"])
        status, body = self.client.post(path + "/oidc/token", {
            "client_id": "cli", "grant_type": DEVICE_GRANT, "device_code": dc["device_code"]})
        self.assertEqual(status, 200, body)
        return body

    def test_a_client_without_offline_access_gets_no_refresh_token_at_sign_in(self):
        self.emu.oidc.configure(path="/application/o/app", sign_in_refresh_tokens=False)
        body = self.sign_in()
        self.assertIn("access_token", body)
        self.assertNotIn("refresh_token", body)
        self.emu.oidc.configure(path="/application/o/app")
        self.assertIn("refresh_token", self.sign_in())

    def test_discovery_at_the_issuer_path_only_and_no_double_slash(self):
        self.emu.oidc.configure(path="/application/o/app/")
        status, _, text = self.client.request("/application/o/app/.well-known/openid-configuration")
        doc = json.loads(text)
        self.assertEqual((status, doc["issuer"]), (200, self.emu.base_url + "/application/o/app/"))
        self.assertEqual(doc["token_endpoint"], self.emu.base_url + "/application/o/app/oidc/token")
        self.assertEqual(self.client.request("/application/o/app//.well-known/openid-configuration")[0], 404)
        self.assertEqual(self.client.request("/.well-known/oauth-authorization-server/application/o/app")[0], 404)
        self.emu.oidc.configure(path="/application/o/app/", rfc8414=True, document_issuer="X", oidc_location=False)
        self.assertEqual(self.client.request("/application/o/app/.well-known/openid-configuration")[0], 404)
        status, _, text = self.client.request("/.well-known/oauth-authorization-server/application/o/app")
        self.assertEqual((status, json.loads(text)["issuer"]), (200, "X"))
        self.assertEqual(len(self.emu.requests(endpoint="oidc.discovery")), 2)
        self.emu.oidc.configure(path="/")
        status, _, text = self.client.request("/.well-known/openid-configuration")
        self.assertEqual((status, json.loads(text)["issuer"]), (200, self.emu.base_url + "/"))

    def test_scripted_id_tokens_and_strict_rotation(self):
        self.emu.oidc.configure(path="/realms/kc", id_token_iss="ISS")
        login = self.sign_in("/realms/kc")
        claims = _claims(login["id_token"])
        self.assertEqual((claims["iss"], claims["aud"], claims["sub"][:4]), ("ISS", "cli", "sub-"))
        self.emu.oidc.script_id_tokens([None, {"nonce": "N2", "sub": None}])
        first = self.client.post("/realms/kc/oidc/token", {
            "client_id": "cli", "grant_type": "refresh_token", "refresh_token": login["refresh_token"]})[1]
        self.assertNotIn("id_token", first)
        self.assertNotEqual(first["refresh_token"], login["refresh_token"])
        second = self.client.post("/realms/kc/oidc/token", {
            "client_id": "cli", "grant_type": "refresh_token", "refresh_token": first["refresh_token"]})[1]
        self.assertEqual(_claims(second["id_token"])["nonce"], "N2")
        self.assertNotIn("sub", _claims(second["id_token"]))
        status, reused = self.client.post("/realms/kc/oidc/token", {
            "client_id": "cli", "grant_type": "refresh_token", "refresh_token": login["refresh_token"]})
        self.assertEqual((status, reused["error"]), (400, "invalid_grant"))

    def test_keycloak_states_refresh_expires_in_and_0_for_none(self):
        """Keycloak's `refresh_expires_in`: the session's remaining seconds, renewed with each
        rotated token; 0 for a token that never expires; "Token is not active" after the time."""
        self.emu.oidc.configure(path="/realms/kc")
        self.emu.configure(announce_refresh_token_lifetime=True)
        self.assertEqual(self.sign_in("/realms/kc")["refresh_expires_in"], 0)
        self.emu.configure(refresh_token_lifetime=1800)
        login = self.sign_in("/realms/kc")
        self.assertIn(login["refresh_expires_in"], (1799, 1800))
        status, first = self.client.post("/realms/kc/oidc/token", {
            "client_id": "cli", "grant_type": "refresh_token", "refresh_token": login["refresh_token"]})
        self.assertEqual(status, 200, first)
        self.assertIn(first["refresh_expires_in"], (1799, 1800))
        self.emu.configure(refresh_token_lifetime=0.3)
        short = self.sign_in("/realms/kc")
        time.sleep(0.4)  # the token's whole lifetime: what is tested is the refusal after it
        status, dead = self.client.post("/realms/kc/oidc/token", {
            "client_id": "cli", "grant_type": "refresh_token", "refresh_token": short["refresh_token"]})
        self.assertEqual((status, dead["error"], dead.get("error_description")),
                         (400, "invalid_grant", "Token is not active"))

    def test_authorize_adds_iss_and_the_nonce_reaches_the_id_token(self):
        self.emu.oidc.configure(path="/o/", iss_parameter=True, response_iss="http://other")
        query = {"client_id": "cli", "response_type": "code", "scope": "openid", "nonce": "N1",
                 "redirect_uri": "http://127.0.0.1:4711/", "state": "s"}
        _, headers, _ = self.client.request("/o/oidc/authorize?" + urlencode(query))
        params = parse_qs(urlsplit(headers["Location"]).query)
        self.assertEqual(params["iss"], ["http://other"])
        body = self.client.post("/o/oidc/token", {"client_id": "cli", "grant_type": "authorization_code",
                                                  "code": params["code"][0],
                                                  "redirect_uri": "http://127.0.0.1:4711/"})[1]
        self.assertEqual(_claims(body["id_token"])["nonce"], "N1")


class StandaloneTest(unittest.TestCase):
    def test_ready_file_and_sigterm(self):
        with tempfile.TemporaryDirectory() as tmp:
            ready = os.path.join(tmp, "ready.json")
            proc = subprocess.Popen([sys.executable, os.path.join(HERE, "idp_emulator.py"),
                                     "--https", "--cert-dir", CERTS.name, "--ready-file", ready,
                                     "--auto-approve", "0", "--interval", "0"],
                                    stderr=subprocess.DEVNULL)
            try:
                for _ in range(100):
                    if os.path.exists(ready):
                        break
                    time.sleep(0.05)
                with open(ready) as f:
                    info = json.load(f)
                self.assertEqual(info["control"], info["base_url"] + "/_control")
                self.assertEqual(info["ca_file"], os.path.join(CERTS.name, "ca.pem"))
                context = ssl.create_default_context(cafile=info["ca_file"])
                with urllib.request.urlopen(info["control"] + "/options", context=context) as r:
                    self.assertEqual(json.load(r)["auto_approve"], 0)
            finally:
                proc.send_signal(signal.SIGTERM)
                self.assertEqual(proc.wait(timeout=10), 0)

    def test_plain_http(self):
        with Emulator() as emu:
            self.assertTrue(emu.base_url.startswith("http://127.0.0.1:"))
            self.assertIn("user_code", Client(emu).device_code())


if __name__ == "__main__":
    unittest.main()
