"""`provider = oidc` against a real Glewlwyd 2.7.5 from Debian (Tests/Integration/glewlwyd.py),
started once for the class on loopback with SQLite and configured over its admin REST API; the
user's side (sign-in, consent, device verification) is played over its REST API.

Covered: device and browser sign-in with a public client, discovery with the exact issuer match
(a mismatch is exit 64 before any sign-in), an unreachable issuer (exit 4), refresh with a rolling
and with a rotating (one-use) refresh-token plugin (five refreshes in a row, the newest token
stored), a dead refresh token, revoke, git `get` through the account's `hosts`, and no refresh
token, code or client secret in any output.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.parse

import glewlwyd
from flows import BrowserFlows, FlowTestCase
from harness import TOKENBROKER

PUBLIC = "tb-public"
BASIC_ONLY = "tb-basic"
POST_ONLY = "tb-post"
# Glewlwyd 2.7.5 does not form-decode HTTP Basic credentials (RFC 6749 §2.3.1 says it must): a
# secret with ':', '%' or '+' fails there whoever encodes it right, so this one has none.
SECRET = "s3cret-SENTINEL.value_1"


@unittest.skipUnless(glewlwyd.available(), "glewlwyd is not installed (make deps installs it)")
class GlewlwydTest(BrowserFlows, FlowTestCase):
    emulator_options = {}

    @classmethod
    def setUpClass(cls):
        cls.glw_dir = tempfile.mkdtemp(prefix="tb-glewlwyd-")
        cls.glw = glewlwyd.Glewlwyd(cls.glw_dir)
        cls.glw.start()
        cls.redirect_port = glewlwyd.free_port()
        cls.redirect_uri = "http://127.0.0.1:%d/" % cls.redirect_port
        cls.rolling = cls.glw.plugin("rolling", rolling=True)
        cls.rotating = cls.glw.plugin("rotating", rolling=False, one_use=True)
        cls.glw.client(PUBLIC, redirect_uris=[cls.redirect_uri])
        cls.glw.client(BASIC_ONLY, SECRET, [cls.redirect_uri], methods=["client_secret_basic"])
        cls.glw.client(POST_ONLY, SECRET, [cls.redirect_uri], methods=["client_secret_post"])

    @classmethod
    def tearDownClass(cls):
        cls.glw.stop()
        shutil.rmtree(cls.glw_dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.use(self.rolling)

    def use(self, issuer, extra="", broker="", client=PUBLIC):
        self.client_id = client
        self.issuer = issuer
        self.plugin_name = issuer.rsplit("/", 1)[1]
        self.write_config(self.default_config(extra_broker=broker) + f"""
[account corp]
provider = oidc
issuer = {issuer}
client-id = {client}
redirect-port = {self.redirect_port}
hosts = git.corp.test
{extra}
""")

    # --- the user's side

    def device_login(self, account="corp"):
        return self.device_login_approved_by(
            lambda code: self.glw.approve_device(self.plugin_name, code, self.client_id), account)

    def browser_login(self, account="corp"):
        url_file = os.path.join(self.tmp, "authorize-url")
        browser = os.path.join(self.tmp, "browser.sh")
        with open(browser, "w") as f:
            f.write("#!/bin/sh\nprintf '%s' \"$1\" > " + url_file + "\n")
        os.chmod(browser, 0o755)
        p = self.start_browser_login(account, browser=browser)
        deadline = time.time() + 60
        while not os.path.exists(url_file) and time.time() < deadline:
            time.sleep(0.05)
        with open(url_file) as f:
            url = f.read()
        location = self.glw.authorize(url, self.client_id)
        self.assertTrue(location.startswith(self.redirect_uri), location)
        parts = urllib.parse.urlsplit(location)
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", self.redirect_port, timeout=30)
        conn.request("GET", parts.path + "?" + parts.query)
        conn.getresponse().read()
        conn.close()
        return self.finish(p), url, urllib.parse.parse_qs(parts.query)

    def stored(self, account="corp"):
        [item] = self.items_of_kind("refresh-token", account)
        return json.loads(item["secret"])

    def assert_clean(self, *results, extra=()):
        secrets = [s for s in extra if s]
        for r in results:
            for s in secrets:
                self.assertNotIn(s.encode(), r.stderr)
                if r.returncode != 0:
                    self.assertNotIn(s.encode(), r.stdout)

    # --- tests

    def test_device_sign_in_then_token_get_and_git(self):
        r = self.device_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        record = self.stored()
        self.assertEqual(record.get("identity"), "alice@example.test")  # the ID token's email
        t = self.run_broker("token", "get", "corp")
        self.assertEqual(t.returncode, 0, t.stderr)
        token = t.stdout.decode().strip()
        self.assertTrue(token)
        git = self.run_broker("get", input="protocol=https\nhost=git.corp.test\n\n")
        self.assertEqual(git.returncode, 0, git.stderr)
        self.assertIn(("password=%s" % token).encode(), git.stdout)
        # The discovery document was kept on disk, privately, for the next process.
        cache = os.path.join(self.home, ".cache", "tokenbroker")
        kept = [n for n in os.listdir(cache) if n.startswith("discovery-")]
        self.assertEqual(len(kept), 1, kept)
        self.assertEqual(os.stat(os.path.join(cache, kept[0])).st_mode & 0o777, 0o600)
        self.assert_clean(r, t, git, extra=[record["refresh_token"]])

    def test_browser_sign_in_sends_nonce_and_pkce(self):
        r, url, redirect = self.browser_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        self.assertIn("nonce", query)
        self.assertEqual(query["code_challenge_method"], ["S256"])
        self.assertEqual(query["redirect_uri"], [self.redirect_uri])
        record = self.stored()
        self.assertEqual(record.get("identity"), "alice@example.test")
        self.assert_clean(r, extra=[record["refresh_token"], redirect.get("code", [""])[0]])

    def refresh_five_times(self):
        """Five `token get --force-refresh`; each must reach Glewlwyd, which shows in five distinct
        access tokens (a refresh answered from any cache would repeat one). Returns the refresh
        token stored after each."""
        tokens, access = [], []
        for _ in range(5):
            t = self.run_broker("token", "get", "corp", "--force-refresh")
            self.assertEqual(t.returncode, 0, t.stderr)
            access.append(t.stdout.strip().decode())
            tokens.append(self.stored()["refresh_token"])
            self.assert_clean(t, extra=tokens + access[:-1])
        self.assertTrue(all(access), access)
        self.assertEqual(len(set(access)), 5, "every --force-refresh got a new access token from Glewlwyd")
        return tokens

    def test_refresh_with_a_rolling_refresh_token(self):
        self.assertEqual(self.device_login().returncode, 0)
        first = self.stored()["refresh_token"]
        tokens = self.refresh_five_times()
        self.assertTrue(all(t == first for t in tokens), "a rolling refresh token keeps its value")

    def test_refresh_with_a_rotating_refresh_token(self):
        self.use(self.rotating)
        self.assertEqual(self.device_login().returncode, 0)
        first = self.stored()["refresh_token"]
        tokens = self.refresh_five_times()
        self.assertEqual(len(set([first] + tokens)), 6, "each refresh rotates, and the newest is stored")

    def test_a_dead_refresh_token_names_the_server_and_login(self):
        self.use(self.rotating, broker="agent = off")
        self.assertEqual(self.device_login().returncode, 0)
        item = self.items_of_kind("refresh-token", "corp")[0]
        old = item["secret"]
        self.assertEqual(self.run_broker("token", "get", "corp", "--force-refresh").returncode, 0)
        self.kill_agent()  # nothing holds the store while the test edits it
        # Put the redeemed (now dead) refresh token back, as a stale copy would be.
        self.put_back(item, old)
        self.assertEqual([(i["secret"], i.get("schema")) for i in self.items_of_kind("refresh-token", "corp")],
                         [(old, "org.tokenbroker.Secret")])
        t = self.run_broker("token", "get", "corp", "--force-refresh")
        self.assertEqual(t.returncode, 3, t.stderr)
        self.assertIn(b"tokenbroker login corp", t.stderr)
        self.assertIn(b"127.0.0.1:%d" % self.glw.port, t.stderr)
        self.assertNotIn(b"proxy", t.stderr)
        self.assertEqual(len(self.items_of_kind("refresh-token", "corp")), 1)  # §6: a bare 400 deletes nothing
        self.assert_clean(t, extra=[json.loads(old)["refresh_token"]])

    def test_revoke(self):
        self.assertEqual(self.device_login().returncode, 0)
        rt = self.stored()["refresh_token"]
        r = self.run_broker("revoke", "corp")
        # Glewlwyd lets only authenticated clients revoke: a public client gets a bare 401, so the
        # grant may remain (exit 4), named at the server's host; signed out locally all the same.
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn(b"HTTP 401", r.stderr)
        self.assertIn(b"signed out locally", r.stderr)
        self.assertIn(b"127.0.0.1:%d" % self.glw.port, r.stderr)
        self.assertNotIn(b"google", r.stderr)
        self.assertEqual(self.items_of_kind("refresh-token", "corp"), [])
        self.assert_clean(r, extra=[rt])
        t = self.run_broker("token", "get", "corp")
        self.assertEqual(t.returncode, 3, t.stderr)

    def test_a_basic_only_confidential_client_signs_in_refreshes_and_revokes(self):
        """The default with a secret is client_secret_basic: a Basic-only client works at the
        device authorization, token and revocation endpoints, and the grant ends at Glewlwyd."""
        self.use(self.rolling, extra="client-secret = " + SECRET, client=BASIC_ONLY)
        r = self.device_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        t = self.run_broker("token", "get", "corp", "--force-refresh")
        self.assertEqual(t.returncode, 0, t.stderr)
        rt = self.stored()["refresh_token"]
        v = self.run_broker("revoke", "corp")
        self.assertEqual(v.returncode, 0, v.stderr)
        self.assertEqual(v.stderr, b"tokenbroker: revoked at 127.0.0.1:%d; signed out locally\n" % self.glw.port)
        self.assertFalse(self.glw.introspect("rolling", rt, BASIC_ONLY, SECRET))
        self.assert_clean(r, t, v, extra=[rt, SECRET])

    def test_a_post_only_client_with_client_auth_post_signs_in_by_browser(self):
        self.use(self.rolling, extra="client-secret = %s\nclient-auth = client_secret_post" % SECRET, client=POST_ONLY)
        r, _, redirect = self.browser_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.stored().get("identity"), "alice@example.test")
        t = self.run_broker("token", "get", "corp", "--force-refresh")
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assert_clean(r, t, extra=[self.stored()["refresh_token"], SECRET, redirect.get("code", [""])[0]])

    def test_a_document_naming_another_issuer_is_refused_before_sign_in(self):
        self.use(self.rolling + "/")  # the document says ".../rolling": not byte for byte the same
        r = self.run_broker("login", "corp", "--device-code", timeout=60)
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn(self.rolling.encode(), r.stderr)
        self.assertIn(b"issuer", r.stderr)
        self.assertNotIn(b"enter the code", r.stderr)

    def test_an_unreachable_issuer_is_exit_4_and_deletes_nothing(self):
        self.assertEqual(self.device_login().returncode, 0)
        self.use("http://127.0.0.1:9/api/nowhere")
        t = self.run_broker("token", "get", "corp", "--force-refresh", timeout=60)
        self.assertEqual(t.returncode, 4, t.stderr)
        self.assertEqual(len(self.items_of_kind("refresh-token", "corp")), 1)

    # --- bug-cases-3.md X08: kube-token = id

    def exec_credential(self, *extra):
        t = self.run_broker("token", "get", "corp", "--format", "exec-credential", *extra)
        self.assertEqual(t.returncode, 0, t.stderr)
        return t, json.loads(t.stdout)["status"]

    def test_X08_exec_credential_carries_the_id_token_with_its_own_exp(self):
        """Glewlwyd's ID token (a JWT for the client, from the issuer) is what exec-credential hands
        kubectl with kube-token = id, with its `exp` as expirationTimestamp, kept next to the access
        token; the default format still prints the access token."""
        self.use(self.rolling, extra="kube-token = id")
        self.assertEqual(self.device_login().returncode, 0)
        t, status = self.exec_credential()
        claims = jwt_claims(status["token"])
        self.assertEqual(claims["iss"], self.rolling)
        self.assertIn(PUBLIC, claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]])
        self.assertEqual(status["expirationTimestamp"],
                         time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims["exp"])))
        access = self.run_broker("token", "get", "corp")
        self.assertEqual(access.returncode, 0, access.stderr)
        self.assertNotEqual(access.stdout.strip().decode(), status["token"])
        [item] = self.items_of_kind("access-token", "corp")
        self.assertEqual(json.loads(item["secret"])["id_token"], status["token"])
        # Glewlwyd 2.7.5 answers a refresh with no id_token: exit 3, nothing on stdout, the
        # server named, and the refresh token kept (the access token of that reply still serves).
        rt = self.stored()["refresh_token"]
        t2 = self.run_broker("token", "get", "corp", "--format", "exec-credential", "--force-refresh")
        self.assertEqual(t2.returncode, 3, t2.stderr)
        self.assertEqual(t2.stdout, b"")
        self.assertIn(b"127.0.0.1:%d returned no ID token on refresh; the cluster needs one" % self.glw.port, t2.stderr)
        self.assertEqual(self.stored()["refresh_token"], rt)
        again = self.run_broker("token", "get", "corp")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assert_clean(t, t2, access, again, extra=[rt])


def jwt_claims(token):
    import base64
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


if __name__ == "__main__":
    unittest.main()
