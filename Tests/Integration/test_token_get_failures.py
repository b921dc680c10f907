"""`tokenbroker token get` when the refresh fails: a rejected refresh token, an interactive step,
5xx with Retry-After, proxy pages, malformed replies, dropped connections, and provider error
text that echoes secrets.

Bug cases (bug-cases.md): B12 (terminal invalid_grant: exit 3 at once, item deleted),
B29 (no secret in any message, also with --verbose); interface.md §6 (what is deleted when).
Access tokens live 200 s here (< refresh-margin 300), so every `token get` refreshes.
"""
import base64
import json
import socket
import threading
import unittest

from flows import GIT_GET, BrowserFlows, FlowTestCase

LOGIN_HINT = b"tokenbroker login work"


class RefreshFailureTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1, "access_token_lifetime": 200}

    def setUp(self):
        super().setUp()
        self.rt = self.signed_in_with_expired_token(200)  # so the first call refreshes

    def token_get(self, *args, timeout=60):
        return self.run_broker("token", "get", "work", *args, timeout=timeout)

    def assert_failed(self, r, status, verbose=False):
        """Exit `status`, nothing on stdout, exactly one `tokenbroker: ...` line on stderr; with
        `verbose`, diagnostics lines (each `tokenbroker: ...`) may come before that one."""
        self.assertEqual(r.returncode, status, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = r.stderr.decode(errors="replace").splitlines()
        if verbose:
            self.assertGreaterEqual(len(lines), 1, r.stderr)
        else:
            self.assertEqual(len(lines), 1, r.stderr)
        for line in lines:
            self.assertTrue(line.startswith("tokenbroker: "), lines)

    # --- the refresh token is rejected, or an interactive step is needed

    def test_revoked_refresh_token_exits_3_and_deletes_it(self):
        """B12: `invalid_grant` for a revoked refresh token: exit 3 naming `tokenbroker login
        work`, the item and the account's access tokens deleted; the next call sends nothing."""
        self.assertEqual(self.emu.revoke(self.rt), 1)
        r = self.token_get(timeout=30)
        self.assert_failed(r, 3)
        self.assertIn(LOGIN_HINT, r.stderr)
        self.assertEqual(self.keyring_items(), [])
        self.assertEqual(len(self.refresh_requests()), 1)
        again = self.token_get(timeout=30)
        self.assert_failed(again, 3)
        self.assertIn(LOGIN_HINT, again.stderr)
        git = self.run_broker("get", input=GIT_GET, timeout=30)
        # git's helper answers only quit=1 (interface.md §4), so git does not prompt.
        self.assertEqual((git.returncode, git.stdout), (3, b"quit=1\n"), git.stderr)
        self.assertIn(LOGIN_HINT, git.stderr)
        self.assertEqual(len(git.stderr.splitlines()), 1, git.stderr)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assert_no_secret_leak(r, again, git)

    def test_a_bare_400_or_401_names_status_and_host_and_deletes_nothing(self):
        """interface.md §6: a 400/401 without an OAuth error body (Glewlwyd's answer to a dead
        refresh token) is no network problem: exit 3, the status and the endpoint's host named,
        `tokenbroker login work` if it persists; the refresh token stays."""
        host = self.emu.base_url.split("://", 1)[1].rstrip("/")
        for status in (400, 401):
            self.emu.add_fault("empty", "token", status=status, count=1)
            r = self.token_get(timeout=30)
            self.assert_failed(r, 3)
            self.assertIn(b"HTTP %d" % status, r.stderr)
            self.assertIn(host.encode(), r.stderr)
            self.assertIn(LOGIN_HINT, r.stderr)
            self.assertNotIn(b"proxy", r.stderr)
            self.assertEqual(len(self.items_of_kind("refresh-token", "work")), 1)
            self.assert_no_secret_leak(r)
        self.assertEqual(self.token_get(timeout=30).returncode, 0)

    def test_invalid_grant_echoing_the_refresh_token_is_redacted(self):
        """B12 + B29: an `invalid_grant` whose description (and every other field) echoes the
        refresh token: exit 3, item deleted, the token in no output, also with --verbose."""
        echo = "AADSTS50173: The provided grant %s has expired due to it being revoked." % self.rt
        self.emu.add_fault("json", "token", status=400, body={
            "error": "invalid_grant", "error_description": echo, "error_codes": [50173],
            "suberror": self.rt, "trace_id": self.rt, "correlation_id": self.rt})
        r = self.token_get("--verbose", timeout=30)
        self.assert_failed(r, 3, verbose=True)
        self.assertIn(LOGIN_HINT, r.stderr)
        self.assertNotIn(self.rt.encode(), r.stderr)
        self.assertEqual(self.items_of_kind("refresh-token"), [])
        self.assert_no_secret_leak(r, extra=[self.rt])

    def test_other_errors_echoing_the_refresh_token_are_redacted(self):
        """B29: provider error text echoing the refresh token (a config error, a 503 after
        retries, an MFA requirement) never reaches stderr, with or without --verbose; none of
        these deletes the refresh token (interface.md §6)."""
        cases = [
            (400, {"error": "invalid_request", "error_description": "bad request for token %s" % self.rt}, 1),
            (503, {"error": "temporarily_unavailable", "error_description": "%s: try later" % self.rt}, 4),
            (400, {"error": "interaction_required", "suberror": "basic_action", "error_codes": [50076],
                   "error_description": "AADSTS50076: MFA needed for refresh token %s" % self.rt}, 3),
            (400, {"error": self.rt, "error_description": self.rt}, 1),
        ]
        results = []
        for status, body, expected in cases:
            for verbose in ((), ("--verbose",)):
                with self.subTest(body=body["error"][:20], verbose=bool(verbose)):
                    self.emu.clear_faults()
                    self.emu.add_fault("json", "token", count=3, status=status, body=body)
                    r = self.token_get(*verbose, timeout=60)
                    self.assert_failed(r, expected, verbose=bool(verbose))
                    self.assertNotIn(self.rt.encode(), r.stderr)
                    self.assertEqual(self.stored_refresh_token(), self.rt)
                    results.append(r)
        self.assert_no_secret_leak(*results, extra=[self.rt])

    def test_interaction_required_exits_3_and_keeps_the_refresh_token(self):
        """interface.md §6: `interaction_required` (MFA, AADSTS50076) needs a sign-in for this
        resource: exit 3 naming `tokenbroker login work`, but the refresh token stays."""
        self.emu.set_user_flags(mfa_required=True)
        items = self.items_of_kind("refresh-token")
        r = self.token_get(timeout=30)
        self.assert_failed(r, 3)
        self.assertIn(LOGIN_HINT, r.stderr)
        self.assertIn(b"multi-factor", r.stderr)
        self.assertEqual(self.items_of_kind("refresh-token"), items)
        self.emu.set_user_flags(mfa_required=False)
        ok = self.token_get(timeout=30)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assert_no_secret_leak(r, ok)

    # --- the provider or the network fails

    def test_503_with_retry_after_twice_then_success(self):
        """5xx are retried, waiting at least the server's Retry-After: 503 (Retry-After: 1) twice,
        then a good answer: `token get` succeeds."""
        self.emu.add_fault("status", "token", count=2, status=503, retry_after=1)
        r = self.token_get(timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        attempts = self.refresh_requests()
        self.assertEqual([a["fault"] for a in attempts], ["status", "status", None])
        for a, b in zip(attempts, attempts[1:]):
            self.assertGreaterEqual(b["t"] - a["t"], 1)
        self.assertEqual(r.stdout.decode().strip(), attempts[-1]["response"]["access_token"])
        self.assertEqual(self.stored_refresh_token(), attempts[-1]["response"]["refresh_token"])
        self.assert_no_secret_leak(r)

    def check_unavailable_keeps_everything(self, *faults, attempts=None):
        """Queues `faults` (kwargs of add_fault), runs `token get`: exit 4, one line, nothing
        deleted or changed in the keyring. Returns the result."""
        for fault in faults:
            self.emu.add_fault(endpoint="token", **fault)
        items = self.keyring_items()
        r = self.token_get(timeout=60)
        self.assert_failed(r, 4)
        self.assertEqual(self.keyring_items(), items)
        if attempts is not None:
            self.assertEqual(len(self.refresh_requests()), attempts)
        self.assert_no_secret_leak(r)
        return r

    def test_503_on_every_attempt_exits_4_and_deletes_nothing(self):
        """interface.md §6: 5xx after the retries: exit 4, the refresh token is kept."""
        self.check_unavailable_keeps_everything(dict(kind="status", status=503, count=100), attempts=3)

    def test_proxy_html_page_exits_4_with_one_line(self):
        """A proxy's HTML error page (502, retried; 403, not): exit 4, one line without the page's
        markup; the refresh token is kept."""
        for status, count in ((502, 3), (403, 1)):
            with self.subTest(status=status):
                r = self.check_unavailable_keeps_everything(dict(kind="html", status=status, count=count))
                self.assertNotIn(b"<", r.stderr)
                self.assertNotIn(b"nginx", r.stderr)
                self.assertIn(b"HTTP %d" % status, r.stderr)
                self.assertEqual(self.emu.pending_faults(), [])
        self.assertIn(b"proxy", r.stderr)  # 403 with a page: not OAuth JSON, so check the proxy

    # --- X06: answers that are not the OAuth server's

    def test_X06_a_200_html_page_is_a_proxy_not_a_token(self):
        """X06 step 1: a refresh answered 200 text/html (a Zscaler-like page): exit 4 naming the
        host, the status and the content type, once (not retried); nothing stored or deleted."""
        host = self.emu.base_url.split("://", 1)[1].rstrip("/")
        r = self.check_unavailable_keeps_everything(dict(kind="html", status=200), attempts=1)
        self.assertIn(b"unexpected reply from %s (HTTP 200, text/html, not JSON)" % host.encode(), r.stderr)
        self.assertIn(b"a proxy or portal may be intercepting", r.stderr)
        self.assertNotIn(b"<", r.stderr)
        self.assertEqual(self.stored_refresh_token(), self.rt)

    def test_X06_verbose_adds_one_neutralised_line_of_the_page(self):
        """X06 step 1, `--verbose`: the 200 HTML page (with terminal escapes, a bell, the refresh
        token echoed back and 3 KB of text) adds exactly one line: the page's text without tags,
        control characters or the token, at most 160 characters; the error line is unchanged."""
        page = ("<html>\r\n<head><title>Zscaler</title></head>\r\n<body>\x1b[2J\x1b]0;pwned\x07"
                "<h1>Internet Security by Zscaler</h1>\r\n<p>Your request for refresh_token=%s was held."
                "</p>\n<p>%s</p></body></html>" % (self.rt, "lorem ipsum " * 250))
        self.emu.add_fault("html", "token", status=200, body=page)
        r = self.token_get("--verbose", timeout=60)
        self.assertEqual(r.returncode, 4, r.stderr)
        lines = r.stderr.decode().splitlines()
        body = [line for line in lines if "reply body from" in line]
        self.assertEqual(len(body), 1, lines)
        text = body[0].split("): ", 1)[1]
        # The escapes lose their ESC and BEL (what makes them act), so what is left is inert text.
        self.assertTrue(text.startswith("Zscaler "), text)
        self.assertIn("Internet Security by Zscaler Your request for refresh_token=<redacted> was held.", text)
        self.assertLessEqual(len(text), 161)
        self.assertNotIn(self.rt, body[0])
        self.assertFalse(any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in "".join(lines)), r.stderr)
        self.assertNotIn("<", body[0].replace("<redacted>", ""))
        self.assertIn("unexpected reply from", lines[-1])
        self.assertEqual(self.stored_refresh_token(), self.rt)
        self.assert_no_secret_leak(r)
        self.emu.add_fault("html", "token", status=200, body=page)
        r = self.token_get(timeout=60)
        self.assertNotIn(b"reply body", r.stderr)
        self.assertNotIn(b"Zscaler", r.stderr)

    def test_X06_redirects_on_the_token_post_are_never_followed(self):
        """X06 step 2: 302, 307 and 308 to another loopback port (a gateway): none is followed,
        the gateway sees no connection at all (so no refresh token), exit 4 naming the
        redirect's host; the refresh token kept."""
        gateway = socket.socket()
        gateway.bind(("127.0.0.1", 0))
        gateway.listen(8)
        gateway.settimeout(0.2)
        self.addCleanup(gateway.close)
        received = []
        stop = threading.Event()

        def serve():
            while not stop.is_set():
                try:
                    conn, _ = gateway.accept()
                except OSError:
                    continue
                conn.settimeout(2)
                try:
                    received.append(conn.recv(65536))
                except OSError:
                    received.append(b"")
                conn.close()
        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        self.addCleanup(thread.join, 5)
        self.addCleanup(stop.set)
        gw = "127.0.0.1:%d" % gateway.getsockname()[1]
        for status in (302, 307, 308):
            with self.subTest(status=status):
                location = "http://%s/auD?origurl=%s/token" % (gw, self.emu.base_url)
                r = self.check_unavailable_keeps_everything(
                    dict(kind="redirect", status=status, location=location))
                self.assertIn(b"HTTP %d" % status, r.stderr)
                self.assertIn(b"a redirect to %s, not followed" % gw.encode(), r.stderr)
        self.assertEqual(received, [])
        self.assertEqual(self.stored_refresh_token(), self.rt)

    def test_X06_an_sso_page_on_401_or_403_names_status_and_endpoint(self):
        """X06 step 3: 401 or 403 with an HTML single sign-on page: the status and the
        endpoint's host named (401 as interface.md §6's bare 401: exit 3, `login` if it
        persists; 403: exit 4, a proxy or portal), nothing deleted."""
        host = self.emu.base_url.split("://", 1)[1].rstrip("/")
        for status, code in ((401, 3), (403, 4)):
            with self.subTest(status=status):
                self.emu.add_fault("html", "token", status=status)
                r = self.token_get(timeout=30)
                self.assert_failed(r, code)
                self.assertIn(b"HTTP %d" % status, r.stderr)
                self.assertIn(host.encode(), r.stderr)
                self.assertNotIn(b"<", r.stderr)
                self.assertEqual(self.stored_refresh_token(), self.rt)
                self.assert_no_secret_leak(r)
        self.assertEqual(self.token_get(timeout=30).returncode, 0)

    def test_X06_json_as_text_plain_is_accepted_and_a_200_error_is_an_error(self):
        """X06 step 6: a token reply with `Content-Type: text/plain` is used; a 200 JSON body
        with `error` (invalid_grant) is that error (golang/oauth2's rule)."""
        body = {"access_token": "AT-TEXTPLAIN-1", "token_type": "Bearer", "expires_in": 3600,
                "refresh_token": "RT-TEXTPLAIN-1"}
        self.emu.add_fault("json", "token", status=200, body=body, content_type="text/plain; charset=utf-8")
        r = self.token_get(timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), b"AT-TEXTPLAIN-1")
        self.assertEqual(self.stored_refresh_token(), "RT-TEXTPLAIN-1")
        self.emu.add_fault("json", "token", status=200, body={"error": "server_error"})
        r = self.run_broker("token", "get", "work", "--force-refresh", timeout=60)
        self.assert_failed(r, 4)
        self.assertIn(b"server_error", r.stderr)
        self.assertEqual(self.stored_refresh_token(), "RT-TEXTPLAIN-1")

    def test_invalid_json_exits_4(self):
        """A 200 reply that is not JSON: exit 4, the refresh token kept."""
        self.check_unavailable_keeps_everything(dict(kind="invalid_json"), attempts=1)

    def test_dropped_connection_exits_4(self):
        """The connection is closed without a reply on every attempt: exit 4, nothing deleted;
        a single drop is retried and the call succeeds."""
        self.check_unavailable_keeps_everything(dict(kind="drop", count=3), attempts=3)
        self.emu.add_fault("drop", "token")
        r = self.token_get(timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_no_secret_leak(r)

    def test_a_core_without_libcurl_fails_only_where_it_makes_a_request(self):
        """libcurl is loaded at the first request, not linked: with a `libcurl.so.4` that is not
        libcurl (zlib, without its functions) first on the search path, `accounts` still answers;
        the refresh and a device sign-in fail at once with exit 4 and the same one line naming the
        file, the missing function and the package to install; nothing is sent or deleted, and
        with the real one it works."""
        env = self.env_without_libcurl()
        status = self.run_broker("accounts", env=env, timeout=30)
        self.assertEqual(status.returncode, 0, status.stderr)
        before = len(self.refresh_requests())
        for args in (["token", "get", "work"], ["login", "work", "--device-code"]):
            r = self.run_broker(*args, env=env, timeout=60)
            self.assert_failed(r, 4)
            self.assert_libcurl_missing(r)
        self.assertEqual(len(self.refresh_requests()), before)
        self.assertEqual(self.stored_refresh_token(), self.rt)
        # The agent the front started for these calls has the same search path: stopped, the
        # next one (started without it) refreshes.
        self.assertEqual(self.run_broker("agent", "stop", timeout=30).returncode, 0)
        self.assertEqual(self.token_get(timeout=60).returncode, 0)



class ClientIdentityTest(BrowserFlows, FlowTestCase):
    """X05: the client that obtained a refresh token refreshes it, and a client the server
    refuses (`invalid_client`) is a configuration problem, never a dead token. `provider = oidc`
    at the emulator's tenant issuer, with `web` a confidential client (emulator option
    `confidential_clients`)."""
    emulator_options = {"device_code_interval": 1, "access_token_lifetime": 200,
                        "confidential_clients": {"web": "S3CR3T"}, "public_device_clients": ["cli"],
                        "auto_consent": True}

    def acme_config(self, secret):
        issuer = "%s/%s/v2.0" % (self.emu.base_url, self.emu.options.tenant_id)
        self.write_config(self.default_config() + f"""
[account acme]
provider = oidc
issuer = {issuer}
client-id = web
client-secret = {secret}
scopes = openid profile offline_access
""")

    def test_X05_the_public_device_client_obtains_and_refreshes_without_a_secret(self):
        """X05 steps 1-2: with `device-client-id = cli` and an empty `device-client-secret`,
        the device request and polls carry `client_id=cli` and no client authentication; the
        stored record names `cli`, and the refresh is sent as `cli` without a secret."""
        self.acme_config("S3CR3T")
        with open(self.config_path, "a") as f:
            f.write("device-client-id = cli\ndevice-client-secret =\n")
        r = self.login_and_approve("acme")
        self.assertEqual(r.returncode, 0, r.stderr)
        sent = self.emu.requests(endpoint="devicecode") + self.emu.requests(
            grant_type="urn:ietf:params:oauth:grant-type:device_code")
        self.assertTrue(sent)
        for q in sent:
            self.assertEqual(q["form"].get("client_id"), "cli")
            self.assertNotIn("client_secret", q["form"])
            self.assertNotIn("authorization", {k.lower() for k in q["headers"]})
        [item] = self.items_of_kind("refresh-token", "acme")
        self.assertEqual(json.loads(item["secret"]).get("client_id"), "cli")
        t = self.run_broker("token", "get", "acme", "--scope", "https://graph.microsoft.com/User.Read", timeout=60)
        self.assertEqual(t.returncode, 0, t.stderr)
        refresh = self.refresh_requests()[-1]
        self.assertEqual(refresh["form"].get("client_id"), "cli")
        self.assertNotIn("client_secret", refresh["form"])
        self.assertNotIn("authorization", {k.lower() for k in refresh["headers"]})
        self.assert_no_secret_leak(r, t)

    @staticmethod
    def basic_client(request):
        """The client id of a request's HTTP Basic authentication, else None."""
        auth = {k.lower(): v for k, v in request["headers"].items()}.get("authorization", "")
        if not auth.lower().startswith("basic "):
            return None
        return base64.b64decode(auth[6:]).decode().partition(":")[0]

    def test_X05_browser_sign_in_as_web_replaces_the_device_token_and_refreshes_as_web(self):
        """X05 step 3: after a device sign-in as `cli`, `login --browser`: the code exchange and
        the later refreshes authenticate as `web` with Basic (no client_secret in the body); the
        refresh-token item is replaced by `web`'s."""
        self.acme_config("S3CR3T")
        with open(self.config_path, "a") as f:
            f.write("device-client-id = cli\ndevice-client-secret =\n")
        self.assertEqual(self.login_and_approve("acme").returncode, 0)
        device_rt = self.stored_refresh_token("acme")
        r, _ = self.browser_login("acme")
        self.assertEqual(r.returncode, 0, r.stderr)
        [item] = self.items_of_kind("refresh-token", "acme")
        record = json.loads(item["secret"])
        self.assertNotEqual(record["refresh_token"], device_rt)
        self.assertIn(record.get("client_id"), ("web", None))
        [redeem] = self.emu.requests(grant_type="authorization_code")
        self.assertEqual(self.basic_client(redeem), "web")
        self.assertNotIn("client_secret", redeem["form"])
        t = self.run_broker("token", "get", "acme", "--scope", "https://graph.microsoft.com/User.Read", timeout=60)
        self.assertEqual(t.returncode, 0, t.stderr)
        refresh = self.refresh_requests()[-1]
        self.assertEqual(refresh["form"]["refresh_token"], record["refresh_token"])
        self.assertEqual(self.basic_client(refresh), "web")
        self.assertNotIn("client_secret", refresh["form"])
        self.assert_no_secret_leak(r, t, extra=["S3CR3T"])

    def test_X05_a_device_request_with_a_secret_refused_403_is_exit_6_naming_the_device_client(self):
        """X05 step 4: `device-client-secret = S3CR3T` for the public `cli`: the server answers the
        device request 403 unauthorized_client (Auth0's answer); `login` exits 6 with one line
        naming `cli` and suggesting an empty `device-client-secret`; nothing stored."""
        self.acme_config("S3CR3T")
        with open(self.config_path, "a") as f:
            f.write("device-client-id = cli\ndevice-client-secret = S3CR3T\n")
        r = self.run_broker("login", "acme", "--device-code", timeout=60)
        self.assertEqual(r.returncode, 6, r.stderr)
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("unauthorized_client", lines[0])
        self.assertIn("device client 'cli'", lines[0])
        self.assertIn("empty device-client-secret", lines[0])
        self.assertNotIn("S3CR3T", lines[0])
        self.assertEqual(self.items_of_kind("refresh-token", "acme"), [])

    def test_X05_invalid_grant_for_the_device_clients_own_token_still_signs_out(self):
        """X05 step 6, the contrast: `cli`'s token refreshed as `cli` (no client mismatch) and
        revoked at the server: invalid_grant for that very token is B12's answer: exit 3 naming
        `login`, the refresh token deleted."""
        self.acme_config("S3CR3T")
        with open(self.config_path, "a") as f:
            f.write("device-client-id = cli\ndevice-client-secret =\n")
        self.assertEqual(self.login_and_approve("acme").returncode, 0)
        rt = self.stored_refresh_token("acme")
        self.emu.revoke(rt)
        t = self.run_broker("token", "get", "acme", "--scope", "https://graph.microsoft.com/User.Read", timeout=60)
        self.assertEqual(t.returncode, 3, t.stderr)
        self.assertIn(b"tokenbroker login acme", t.stderr)
        self.assertEqual(self.refresh_requests()[-1]["form"].get("client_id"), "cli")
        self.assertEqual(self.items_of_kind("refresh-token", "acme"), [])
        self.assert_no_secret_leak(t)

    def test_X05_invalid_client_on_refresh_is_exit_64_and_deletes_nothing(self):
        """X05 step 5: the admin rotated `web`'s secret: the refresh is answered 401
        `invalid_client`: exit 64 naming the client id and the auth method, the refresh token
        kept; with the new secret in the config the same refresh token works."""
        self.acme_config("S3CR3T")
        r = self.login_and_approve("acme")
        self.assertEqual(r.returncode, 0, r.stderr)
        rt = self.stored_refresh_token("acme")
        self.emu.configure(confidential_clients={"web": "N3W-S3CR3T"})
        items = self.keyring_items("acme")
        t = self.run_broker("token", "get", "acme", "--force-refresh", timeout=60)
        self.assertEqual(t.returncode, 64, t.stderr)
        self.assertEqual(t.stdout, b"")
        self.assertEqual(len(t.stderr.splitlines()), 1, t.stderr)
        self.assertIn(b"invalid_client", t.stderr)
        self.assertIn(b"'web'", t.stderr)
        self.assertIn(b"client_secret_basic", t.stderr)
        self.assertNotIn(b"S3CR3T", t.stderr)
        self.assertEqual(self.keyring_items("acme"), items)
        self.assertEqual(self.stored_refresh_token("acme"), rt)
        self.acme_config("N3W-S3CR3T")
        # --scope: the emulator, like Entra, wants `scope` on every refresh; the account's own
        # scopes are sent without it (RFC 6749 §6).
        t = self.run_broker("token", "get", "acme", "--scope", "https://graph.microsoft.com/User.Read", timeout=60)
        self.assertEqual(t.returncode, 0, t.stderr)
        refreshes = self.refresh_requests()
        self.assertEqual(refreshes[-1]["form"]["refresh_token"], rt)
        self.assert_no_secret_leak(r, t)

if __name__ == "__main__":
    unittest.main()
