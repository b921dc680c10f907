"""`provider = oidc` against a second real OpenID Provider that no one here wrote:
django-oauth-toolkit from PyPI (Tests/Integration/dot_provider.py), behind Debian's nginx, started
once for the class on loopback. Skipped, with a message, when PyPI or nginx is not there.

DOT is strict where Glewlwyd is lenient: every refresh rotates the refresh token, and presenting
a rotated-away one revokes the whole family (REFRESH_TOKEN_REUSE_PROTECTION), so a client that
ever sends an old token, or two refreshes racing with one token, loses the sign-in. Its RFC 7009
endpoint wants the confidential client's authentication and revokes only tokens of the client
that asks (any other answer is a silent 200). One application per grant type, as DOT has it:
`tb-web` (confidential, authorization code, secret with `:`, `%` and `+`, which RFC 6749
§2.3.1's form-encoding of Basic must carry) and `tb-device` (public, device grant): the account
uses both, as X05's does. DOT's discovery document lists neither its device authorization nor
its revocation endpoint, so the account names them, as a DOT user must.

The 429s are nginx's own (`limit_req`, `limit_req_status 429`, its HTML page, `Retry-After`).
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.parse

import dot_provider
from flows import BrowserFlows, FlowTestCase
from harness import TOKENBROKER

WEB = "tb-web"
DEVICE = "tb-device"
SECRET = "dot:SENTINEL%2B+secret/1"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


@unittest.skipUnless(dot_provider.nginx_available(), "nginx is not installed (make deps installs it)")
class DjangoOAuthToolkitTest(BrowserFlows, FlowTestCase):
    emulator_options = {}

    @classmethod
    def setUpClass(cls):
        cls.redirect_port = dot_provider.free_port()
        cls.redirect_uri = "http://127.0.0.1:%d/" % cls.redirect_port
        cls.dot_dir = tempfile.mkdtemp(prefix="tb-dot-")
        cls.dot = dot_provider.DjangoOAuthToolkit(cls.dot_dir, [
            dict(client_id=WEB, client_secret=SECRET, client_type="confidential",
                 authorization_grant_type="authorization-code", redirect_uris=cls.redirect_uri),
            dict(client_id=DEVICE, client_secret="", client_type="public",
                 authorization_grant_type=DEVICE_GRANT, redirect_uris=""),
        ])
        try:
            cls.dot.start()
        except BaseException:
            cls.dot.stop()
            shutil.rmtree(cls.dot_dir, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.dot.stop()
        shutil.rmtree(cls.dot_dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.dot.throttle(False)
        self.configure()

    def configure(self, broker="", secret=SECRET):
        base = self.dot.base
        self.write_config(self.default_config(extra_broker=broker) + f"""
[account corp]
provider = oidc
issuer = {self.dot.issuer}
client-id = {WEB}
client-secret = {secret}
device-client-id = {DEVICE}
device-client-secret =
device-authorization-endpoint = {base}/o/device-authorization/
revocation-endpoint = {base}/o/revoke_token/
redirect-port = {self.redirect_port}
hosts = git.corp.test
""")

    # --- the user's side

    def device_login(self):
        r = self.device_login_approved_by(self.dot.approve_device)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def browser_login(self):
        url_file = os.path.join(self.tmp, "authorize-url")
        browser = os.path.join(self.tmp, "browser.sh")
        with open(browser, "w") as f:
            f.write("#!/bin/sh\nprintf '%s' \"$1\" > " + url_file + "\n")
        os.chmod(browser, 0o755)
        p = self.start_browser_login("corp", browser=browser)
        deadline = time.time() + 60
        while not os.path.exists(url_file) and time.time() < deadline:
            time.sleep(0.05)
        with open(url_file) as f:
            url = f.read()
        location = self.dot.authorize(url)
        self.assertTrue(location.startswith(self.redirect_uri), location)
        parts = urllib.parse.urlsplit(location)
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", self.redirect_port, timeout=30)
        conn.request("GET", parts.path + "?" + parts.query)
        conn.getresponse().read()
        conn.close()
        r = self.finish(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r, urllib.parse.parse_qs(parts.query).get("code", [""])[0]

    def stored(self):
        [item] = self.items_of_kind("refresh-token", "corp")
        return json.loads(item["secret"])

    def token_get(self, *extra, timeout=60):
        return self.run_broker("token", "get", "corp", *extra, timeout=timeout)

    def assert_clean(self, *results, extra=()):
        for r in results:
            for s in [SECRET] + [s for s in extra if s]:
                self.assertNotIn(s.encode(), r.stderr)
                if r.returncode != 0:
                    self.assertNotIn(s.encode(), r.stdout)

    def refresh_directly(self, refresh_token, client=DEVICE, secret=None):
        """A refresh sent to DOT as a plain client would (the test's, not tokenbroker's)."""
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        if secret is None:
            form["client_id"] = client
            return self.dot.token(form)
        return self.dot.token(form, basic=(client, secret))

    # --- sign-in and strict rotation

    def test_device_sign_in_as_the_public_device_client_then_token_get_and_git(self):
        r = self.device_login()
        record = self.stored()
        self.assertEqual(record.get("identity"), "alice")  # the ID token's preferred_username
        self.assertEqual(record.get("client_id"), DEVICE)
        t = self.token_get()
        self.assertEqual(t.returncode, 0, t.stderr)
        git = self.run_broker("get", input="protocol=https\nhost=git.corp.test\n\n")
        self.assertEqual(git.returncode, 0, git.stderr)
        self.assertIn(b"password=" + t.stdout.strip(), git.stdout)
        self.assert_clean(r, t, git, extra=[record["refresh_token"]])

    def test_strict_rotation_every_refresh_stores_the_new_token_and_never_resends_one(self):
        """Five refreshes, each rotating: each stored token is new and the next refresh presents
        it (with reuse protection, one old token sent would end the family, and the sixth
        refresh would fail)."""
        self.device_login()
        tokens = [self.stored()["refresh_token"]]
        for _ in range(5):
            t = self.token_get("--force-refresh")
            self.assertEqual(t.returncode, 0, t.stderr)
            tokens.append(self.stored()["refresh_token"])
            self.assert_clean(t, extra=tokens)
        self.assertEqual(len(set(tokens)), 6, "each refresh rotated, and the newest was stored")
        status, body = self.refresh_directly(tokens[-2])
        self.assertEqual((status, body.get("error")), (400, "invalid_grant"), "DOT refuses a rotated-away token")

    def test_a_reused_token_ends_the_family_and_tokenbroker_signs_out_on_invalid_grant(self):
        """Someone replays an old refresh token (a stolen copy): DOT revokes the family, so the
        newest one tokenbroker holds is refused with invalid_grant for that very token: exit 3
        naming `login`, and the dead token deleted (interface.md §6)."""
        self.device_login()
        old = self.stored()["refresh_token"]
        self.assertEqual(self.token_get("--force-refresh").returncode, 0)
        newest = self.stored()["refresh_token"]
        self.assertEqual(self.refresh_directly(old)[1].get("error"), "invalid_grant")
        t = self.token_get("--force-refresh")
        self.assertEqual(t.returncode, 3, t.stderr)
        self.assertIn(b"tokenbroker login corp", t.stderr)
        self.assertIn(b"invalid_grant", t.stderr)
        self.assertEqual(self.items_of_kind("refresh-token", "corp"), [])
        self.assert_clean(t, extra=[old, newest])

    def test_concurrent_refreshes_without_the_agent_never_present_one_token_twice(self):
        """Four `token get --force-refresh` at once, each its own process, no agent: the refresh
        lock makes them take turns, each with the token the previous stored; against reuse
        protection any overlap would end the sign-in."""
        self.configure(broker="agent = off")
        self.device_login()
        first = self.stored()["refresh_token"]
        procs = [subprocess.Popen([TOKENBROKER, "token", "get", "corp", "--force-refresh"], env=self.env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
        results = [self.finish(p, 120) for p in procs]
        for r in results:
            self.assertEqual(r.returncode, 0, r.stderr)
        after = self.token_get("--force-refresh")
        self.assertEqual(after.returncode, 0, after.stderr)
        self.assertNotEqual(self.stored()["refresh_token"], first)
        self.assert_clean(after, *results, extra=[first, self.stored()["refresh_token"]])

    # --- X05 at a real server: who obtained a token refreshes and revokes it

    def test_X05_browser_sign_in_as_the_confidential_client_replaces_the_device_token(self):
        """X05 steps 1-3 at DOT: the device sign-in and its refreshes as `tb-device` (public: no
        secret; DOT refuses the token to any other client); then `login --browser` as `tb-web`
        with Basic (a secret with `:`, `%` and `+`, form-encoded as RFC 6749 §2.3.1 says; DOT
        decodes it so) replaces the item, and its refreshes are `tb-web`'s."""
        self.device_login()
        device_rt = self.stored()["refresh_token"]
        self.assertEqual(self.token_get("--force-refresh").returncode, 0)
        device_rt = self.stored()["refresh_token"]
        r, code = self.browser_login()
        record = self.stored()
        self.assertEqual(record.get("client_id", WEB), WEB)
        self.assertNotEqual(record["refresh_token"], device_rt)
        t = self.token_get("--force-refresh")
        self.assertEqual(t.returncode, 0, t.stderr)
        web_rt = self.stored()["refresh_token"]
        self.assertNotEqual(web_rt, record["refresh_token"])
        # That token is tb-web's: as tb-device (public) DOT refuses it.
        self.assertEqual(self.refresh_directly(web_rt)[1].get("error"), "invalid_grant")
        self.assert_clean(r, t, extra=[device_rt, web_rt, code])

    # --- revocation (RFC 7009)

    def test_revoke_as_the_confidential_client_with_basic(self):
        """The browser sign-in's token (tb-web's) is revoked with tb-web's Basic authentication:
        exit 0, and DOT refuses the token afterwards."""
        self.browser_login()
        rt = self.stored()["refresh_token"]
        v = self.run_broker("revoke", "corp")
        self.assertEqual(v.returncode, 0, v.stderr)
        self.assertEqual(v.stderr, b"tokenbroker: revoked at 127.0.0.1:%d; signed out locally\n" % self.dot.port)
        self.assertEqual(self.refresh_directly(rt, WEB, SECRET)[1].get("error"), "invalid_grant")
        self.assertEqual(self.items_of_kind("refresh-token", "corp"), [])
        self.assert_clean(v, extra=[rt])

    def test_revoke_of_a_device_token_asks_as_the_device_client(self):
        """DOT revokes only the asking client's tokens and answers 200 either way: revoked as
        tb-web, tb-device's token would live on. Sent as tb-device (public: client_id only),
        the token is dead afterwards."""
        self.device_login()
        rt = self.stored()["refresh_token"]
        v = self.run_broker("revoke", "corp")
        self.assertEqual(v.returncode, 0, v.stderr)
        self.assertEqual(self.refresh_directly(rt)[1].get("error"), "invalid_grant")
        self.assert_clean(v, extra=[rt])

    def test_revoke_with_a_wrong_secret_is_refused_and_said(self):
        """A rotated secret: DOT answers 401 invalid_client; the grant remains at the server
        (exit 4 saying so), signed out locally all the same."""
        self.browser_login()
        rt = self.stored()["refresh_token"]
        self.configure(secret="not-the-secret")
        v = self.run_broker("revoke", "corp")
        self.assertEqual(v.returncode, 4, v.stderr)
        self.assertIn(b"127.0.0.1:%d" % self.dot.port, v.stderr)
        self.assertIn(b"signed out locally", v.stderr)
        self.assertEqual(self.items_of_kind("refresh-token", "corp"), [])
        status, body = self.refresh_directly(rt, WEB, SECRET)
        self.assertEqual(status, 200, body)  # not revoked
        self.assert_clean(v, extra=[rt, "not-the-secret"])

    # --- a real front that answers 429

    def test_nginx_429_is_a_hold_exit_4_and_deletes_nothing(self):
        """nginx's `limit_req` answers the refresh 429 (its HTML page, Retry-After 3): exit 4 with
        one line naming the server and the wait, the refresh token kept; five more calls during
        the hold send nothing to nginx; after it, the same token refreshes."""
        self.device_login()
        rt = self.stored()["refresh_token"]
        self.dot.throttle(True)
        before = len(self.dot.token_requests())
        status, _ = self.dot.token({"grant_type": "refresh_token", "refresh_token": "x", "client_id": DEVICE})
        self.assertEqual(status, 400)  # the minute's one request, spent
        before = self.dot.wait_for_token_requests(before + 1)  # nginx logs once the reply is sent
        t = self.token_get("--force-refresh")
        self.assertEqual(t.returncode, 4, t.stderr)
        self.assertEqual(t.stdout, b"")
        lines = t.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("'127.0.0.1:%d' is throttling requests for 'corp'" % self.dot.port, lines[0])
        self.assertRegex(lines[0], r"try again in [23] s")
        self.assertIn("the sign-in is kept", lines[0])
        self.dot.wait_for_token_requests(before + 1)
        self.assertEqual([s for s, _ in self.dot.token_requests()[before:]], [429])
        self.assertEqual(self.stored()["refresh_token"], rt)
        for _ in range(5):
            again = self.token_get("--force-refresh")
            self.assertEqual(again.returncode, 4, again.stderr)
        time.sleep(0.5)
        self.assertEqual(len(self.dot.token_requests()), before + 1, "nothing was sent during the hold")
        self.dot.throttle(False)
        time.sleep(dot_provider.RETRY_AFTER + 0.5)
        ok = self.token_get("--force-refresh")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertNotEqual(self.stored()["refresh_token"], rt)  # the same token was accepted and rotated
        self.assert_clean(t, again, ok, extra=[rt])


if __name__ == "__main__":
    unittest.main()
