"""`tokenbroker login ACCOUNT --device-code` against the emulator: RFC 8628 polling, declined and
expired codes, what the prompt shows, what is stored, and the per-account login lock.

Bug cases (bug-cases.md): B07 (login lock), B20 (cached tokens dropped at login),
B27 (slow_down / interval), B29 (no secret in any output).
"""
import json
import unittest

from flows import GIT_GET, FlowTestCase

RT_ATTRIBUTES = {"application": "tokenbroker", "account": "work", "kind": "refresh-token"}
RT_LABEL = "tokenbroker: work (azure) refresh-token"
MAIL_SCOPE = "https://graph.microsoft.com/Mail.Read"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


class DeviceCodeLoginTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1}

    def device_grant_reply(self):
        """The emulator's successful device-code token reply."""
        grants = [r for r in self.emu.requests(grant_type=DEVICE_GRANT)
                  if r["status"] == 200]
        self.assertEqual(len(grants), 1)
        return grants[0]["response"]

    def test_slow_down_grows_the_interval_and_login_succeeds(self):
        """B27: pending, slow_down, slow_down with interval 15, pending, approved: the poll gaps the
        emulator measures are at least 1, 6 (+5), 15 (the server's interval) and 15 seconds."""
        self.emu.script_device_polls(["authorization_pending", "slow_down",
                                      {"error": "slow_down", "interval": 15},
                                      "authorization_pending"])
        p = self.start_login()
        dc = self.wait_for_device_code()
        self.emu.approve(dc["user_code"])  # answered once the script is used up
        r = self.finish(p, timeout=90)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"signed in to work as user1@example.test", r.stdout)
        gaps = self.emu.poll_gaps(dc["user_code"])
        self.assertEqual(len(gaps), 4, gaps)
        for gap, expected in zip(gaps, [1, 6, 15, 15]):
            self.assertGreaterEqual(gap, expected, gaps)
        self.assertEqual(self.stored_refresh_token(), self.device_grant_reply()["refresh_token"])
        self.assert_no_secret_leak(r)

    def test_transient_errors_while_polling_never_shorten_the_gap(self):
        """B27: a 503 (Retry-After: 3) and a dropped connection while polling are retried, never
        sooner than Retry-After or the interval, and the login still succeeds."""
        self.emu.add_fault("status", "token", status=503, retry_after=3, grant_type=DEVICE_GRANT)
        self.emu.add_fault("drop", "token", grant_type=DEVICE_GRANT)
        p = self.start_login()
        dc = self.wait_for_device_code()
        self.emu.approve(dc["user_code"])
        r = self.finish(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        polls = self.emu.requests(grant_type=DEVICE_GRANT)
        self.assertEqual([e["fault"] for e in polls], ["status", "drop", None])
        gaps = [b["t"] - a["t"] for a, b in zip(polls, polls[1:])]
        self.assertGreaterEqual(gaps[0], 3, gaps)
        self.assertGreaterEqual(gaps[1], 1, gaps)
        self.assert_no_secret_leak(r)

    def test_poll_error_echoing_the_device_code_is_redacted(self):
        """B29: a poll error whose description and fields echo the device code: the login fails
        (exit 1: the provider refused the code) and the device code is in no output, with --verbose."""
        p = self.start_login("work", "--verbose")
        dc = self.wait_for_device_code()
        code = dc["device_code"]
        self.emu.add_fault("json", "token", grant_type=DEVICE_GRANT, body={
            "error": "bad_verification_code", "error_description": "device_code %s is not valid" % code,
            "suberror": code, "correlation_id": code})
        r = self.finish(p)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, b"")
        # --verbose adds diagnostics lines; the last line is the one message.
        lines = self.message_lines(r.stderr)
        self.assertIn("bad_verification_code", lines[-1], r.stderr)
        self.assertTrue(all(line.startswith("tokenbroker: ") for line in lines), r.stderr)
        self.assertNotIn(code.encode(), r.stderr)
        self.assertEqual(self.keyring_items(), [])
        self.assert_no_secret_leak(r, extra=[code])

    def test_declined_exits_6_and_stores_nothing(self):
        """B27: `authorization_declined` stops polling: exit 6, a message saying so, nothing stored."""
        p = self.start_login()
        dc = self.wait_for_device_code()
        self.emu.decline(dc["user_code"])
        r = self.finish(p)
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = self.message_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("declined", lines[0])
        self.assertIn("tokenbroker login work", lines[0])
        self.assertEqual(self.keyring_items(), [])
        self.assert_no_secret_leak(r)

    def test_expired_device_code_exits_6(self):
        """B27: the whole flow is bounded by `expires_in`: an unapproved code ends with exit 6."""
        self.emu.configure(device_code_expires_in=2)
        p = self.start_login()
        r = self.finish(p)
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = self.message_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("expired", lines[0])
        self.assertEqual(self.keyring_items(), [])
        self.assert_no_secret_leak(r)

    def test_prompt_drops_control_characters_from_the_server(self):
        """B29 / protocols.md §1.7: the verification URI and user code are shown on stderr (one
        line), with the server's control characters (ESC, BEL, CR, LF) removed."""
        self.emu.configure(verification_uri="https://login.example.test/\x1b[31mdevice\x07\r\nlogin")
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        dc = self.emu.device_code()
        for byte in (b"\x1b", b"\x07", b"\r"):
            self.assertNotIn(byte, r.stderr)
        prompt = [line for line in r.stderr.decode().splitlines() if line.startswith("tokenbroker: to sign in")]
        self.assertEqual(len(prompt), 1, r.stderr)
        self.assertIn("https://login.example.test/[31mdevicelogin", prompt[0])
        self.assertIn(dc["user_code"], prompt[0])
        self.assertNotIn(b"\x1b", r.stdout)
        self.assert_no_secret_leak(r)

    def test_prompt_drops_control_characters_in_the_user_code(self):
        """protocols.md §1.7 rule 6: a device authorization reply whose user code, URI and
        message carry C0/C1 control sequences is shown without them (one prompt line)."""
        self.emu.add_fault("json", "devicecode", status=200, body={
            "user_code": "AB\x1b[2JCD\u009b31m", "device_code": "DC-scripted-0123456789",
            "verification_uri": "https://login.example.test/\x1b]0;owned\x07device",
            "expires_in": 900, "interval": 1, "message": "\x1b[2J enter the code"})
        r = self.finish(self.start_login(), timeout=60)
        self.assertNotEqual(r.returncode, 0)  # the emulator does not know the scripted code
        text = r.stderr.decode()
        for char in ("\x1b", "\x07", "\u009b", "\r"):
            self.assertNotIn(char, text)
        prompt = [line for line in text.splitlines() if line.startswith("tokenbroker: to sign in")]
        self.assertEqual(len(prompt), 1, text)
        self.assertIn("https://login.example.test/]0;owneddevice", prompt[0])
        self.assertIn("AB[2JCD31m", prompt[0])
        self.assert_no_leak("DC-scripted-0123456789", outputs=[r.stdout, r.stderr])

    def test_identity_from_the_provider_is_printed_without_control_characters(self):
        """protocols.md §1.7 rule 6: `signed in to work as <identity>` on stdout; the identity
        comes from the ID token and its control characters never reach the terminal."""
        self.emu.set_user("evil\x1b[31m\u009b2J\x07@example.test")
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), "signed in to work as evil[31m2J@example.test\n")
        doc = json.loads(self.items_of_kind("refresh-token")[0]["secret"])
        self.assertEqual(doc["identity"], "evil[31m2J@example.test")
        a = self.run_broker("accounts", timeout=30)
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertNotIn(b"\x1b", a.stdout)
        g = self.run_broker("get", input=GIT_GET, timeout=30)
        self.assertEqual(g.returncode, 0, g.stderr)
        self.assertIn(b"username=evil[31m2J@example.test\n", g.stdout)
        self.assert_no_secret_leak(r, a, g)

    def test_login_stores_one_refresh_token_item_and_prints_who_signed_in(self):
        """interface.md §3, §7: one refresh-token item with exactly application/account/kind and
        the label `tokenbroker: work (azure) refresh-token`; stdout names the identity."""
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"signed in to work as user1@example.test\n")
        reply = self.device_grant_reply()
        items = self.items_of_kind("refresh-token")
        self.assertEqual(len(items), 1, items)
        self.assertEqual(items[0]["attributes"], RT_ATTRIBUTES)
        self.assertEqual(items[0]["label"], RT_LABEL)
        doc = json.loads(items[0]["secret"])
        self.assertEqual(doc["v"], 1)
        self.assertEqual(doc["refresh_token"], reply["refresh_token"])
        self.assertEqual(doc["identity"], "user1@example.test")
        self.assert_no_secret_leak(r)
        # A second sign-in (another user) replaces the item: still exactly one.
        self.emu.set_user("user2@example.test")
        r2 = self.login_and_approve()
        self.assertEqual(r2.returncode, 0, r2.stderr)
        self.assertEqual(r2.stdout, b"signed in to work as user2@example.test\n")
        items = self.items_of_kind("refresh-token")
        self.assertEqual(len(items), 1, items)
        self.assertEqual(items[0]["attributes"], RT_ATTRIBUTES)
        new_rt = json.loads(items[0]["secret"])["refresh_token"]
        self.assertNotEqual(new_rt, reply["refresh_token"])
        self.assertEqual(json.loads(items[0]["secret"])["identity"], "user2@example.test")
        self.assert_no_secret_leak(r, r2)

    def test_login_drops_cached_access_tokens_of_that_account_only(self):
        """B20: a new sign-in drops every cached access token of the account (all scope sets), and
        none of another account."""
        self.write_config(self.default_config() + OTHER_ACCOUNT.format(base=self.emu.base_url))
        self.assertEqual(self.login_and_approve().returncode, 0)
        self.assertEqual(self.login_and_approve("other").returncode, 0)
        mail = self.run_broker("token", "get", "work", "--scope", MAIL_SCOPE, timeout=30)
        self.assertEqual(mail.returncode, 0, mail.stderr)
        before = self.cached_access_tokens()
        other_before = self.cached_access_tokens("other")
        self.assertEqual(set(before), {"https://graph.microsoft.com/User.Read", MAIL_SCOPE})
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        after = self.cached_access_tokens()
        self.assertNotIn(MAIL_SCOPE, after)
        for token in before.values():
            self.assertNotIn(token, after.values())
        self.assertEqual(self.cached_access_tokens("other"), other_before)
        t = self.run_broker("token", "get", "work", timeout=30)
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertNotIn(t.stdout.strip().decode(), before.values())
        self.assert_no_secret_leak(r, mail)

    def test_X06_html_5xx_while_polling_does_not_abort_the_login(self):
        """X06 step 4: `authorization_pending`, then a 502 and a 503 HTML page, then the
        approval: `login` exits 0 (a passing proxy page does not end the sign-in)."""
        grant = "urn:ietf:params:oauth:grant-type:device_code"
        self.emu.add_fault("json", "token", grant_type=grant, status=400, body={"error": "authorization_pending"})
        self.emu.add_fault("html", "token", grant_type=grant, status=502)
        self.emu.add_fault("html", "token", grant_type=grant, status=503)
        r = self.login_and_approve(timeout=90)
        self.assertEqual(r.returncode, 0, r.stderr)
        polls = self.emu.requests(grant_type=grant)
        self.assertEqual([p["fault"] for p in polls], ["json", "html", "html", None])
        self.assertIsNotNone(self.stored_refresh_token())

    def test_X06_three_404_pages_in_a_row_end_the_login(self):
        """X06 step 4: three 404 HTML answers in a row (a wrong token-endpoint): exit 6 naming
        the token endpoint's URL and the status; nothing stored."""
        grant = "urn:ietf:params:oauth:grant-type:device_code"
        self.emu.add_fault("html", "token", grant_type=grant, status=404, count=3)
        p = self.start_login()
        self.wait_for_device_code()
        r = self.finish(p, timeout=90)
        self.assertEqual(r.returncode, 6, r.stderr)
        url = self.emu.base_url + self.emu.requests(grant_type=grant)[0]["path"]
        self.assertIn(b"HTTP 404", r.stderr)
        self.assertIn(url.encode(), r.stderr)
        self.assertIn(b"3 times in a row", r.stderr)
        self.assertEqual(len(self.emu.requests(grant_type=grant)), 3)
        self.assertEqual(self.items_of_kind("refresh-token"), [])

    def test_verbose_login_shows_no_secret(self):
        """B29: `--verbose` adds diagnostics, never a device code, access or refresh token."""
        r = self.login_and_approve("work", "--verbose")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_no_secret_leak(r)
        self.assert_no_leak(*self.known_secrets(), outputs=[r.stdout])


class LoginLockTest(FlowTestCase):
    """B07 (the lock part): one interactive login per account at a time."""
    emulator_options = {"device_code_interval": 1}

    def test_second_concurrent_login_exits_7_at_once(self):
        """B07: while a login of `work` is pending, a second one exits 7 without starting a flow
        (and `token get` / git `get` exit 3); after the first finishes, a new login works."""
        first = self.start_login()
        dc = self.wait_for_device_code()
        second = self.run_broker("login", "work", "--device-code", timeout=30)
        self.assertEqual(second.returncode, 7, second.stderr)
        self.assertEqual(second.stdout, b"")
        lines = self.message_lines(second.stderr)
        self.assertEqual(len(lines), 1, second.stderr)
        self.assertIn("in progress", lines[0])
        # Non-interactive callers never start a flow either: they say "not signed in" at once.
        waiting = [self.run_broker("token", "get", "work", timeout=30),
                   self.run_broker("get", input=GIT_GET, timeout=30)]
        for r, stdout in zip(waiting, (b"", b"quit=1\n")):  # git's helper: quit=1 (interface.md §4)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertEqual(r.stdout, stdout)
            self.assertIn(b"tokenbroker login work", r.stderr)
        self.assertEqual(self.device_codes_requested(), 1)
        self.emu.approve(dc["user_code"])
        done = self.finish(first)
        self.assertEqual(done.returncode, 0, done.stderr)
        again = self.login_and_approve()
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assert_no_secret_leak(second, again, done, *waiting)

    def test_killed_login_does_not_block_the_next(self):
        """B07: a login killed with SIGKILL while pending leaves no lock behind."""
        first = self.start_login()
        self.wait_for_device_code()
        first.kill()
        first.communicate(timeout=30)
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIsNotNone(self.stored_refresh_token())
        self.assert_no_secret_leak(r)


OTHER_ACCOUNT = """
[account other]
provider = azure
tenant = contoso.example
client-id = 11111111-2222-3333-4444-555555555555
authority = {base}
scopes = https://graph.microsoft.com/User.Read
"""


if __name__ == "__main__":
    unittest.main()
