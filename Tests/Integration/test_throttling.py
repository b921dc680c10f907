"""bug-cases-3.md X07: throttling. Entra's request-loop detection (`invalid_grant` AADSTS50196)
and HTTP 429 with `Retry-After` (seconds or an HTTP date) or Okta's `X-Rate-Limit-Reset` hold back
every refresh of the account until the wait ends, across processes, with and without the agent,
and never sign anyone out (interface.md §6). Access tokens live 200 s here (< refresh-margin 300),
so every `token get` would refresh.
"""
import email.utils
import subprocess
import time
import unittest

from flows import FlowTestCase
from harness import TOKENBROKER


class ThrottleTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1, "access_token_lifetime": 200}
    agent = "auto"

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config(extra_broker="agent = %s" % self.agent))
        self.rt = self.signed_in_with_expired_token(200)

    def token_get(self, *args, timeout=60):
        return self.run_broker("token", "get", "work", *args, timeout=timeout)

    def assert_throttled(self, r, seconds=None):
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("is throttling requests for 'work'", lines[0])
        self.assertIn("the sign-in is kept", lines[0])
        if seconds is not None:
            self.assertIn("try again in %d s" % seconds, lines[0])

    def assert_still_signed_in(self):
        self.assertEqual(self.stored_refresh_token(), self.rt)

    def test_X07_request_loop_detection_is_a_hold_not_a_sign_out(self):
        """AADSTS50196 as `invalid_grant`: exit 4, the refresh token kept; ten calls during the
        hold send nothing; after it, the same refresh token refreshes."""
        self.emu.add_fault("request_loop", endpoint="token", grant_type="refresh_token", retry_after=4)
        r = self.token_get("--force-refresh")
        self.assert_throttled(r, 4)
        self.assertIn(b"AADSTS50196", r.stderr)
        self.assert_still_signed_in()
        for _ in range(10):
            self.assert_throttled(self.token_get("--force-refresh"))
        self.assertEqual(len(self.refresh_requests()), 1)
        time.sleep(4.2)
        ok = self.token_get()
        self.assertEqual(ok.returncode, 0, ok.stderr)
        sent = [e["form"]["refresh_token"] for e in self.refresh_requests()]
        self.assertEqual(sent, [self.rt, self.rt])
        self.assert_no_secret_leak(r, ok)

    def test_X07_request_loop_without_retry_after_holds_a_minute(self):
        self.emu.add_fault("request_loop", endpoint="token", grant_type="refresh_token")
        self.assert_throttled(self.token_get(), 60)
        again = self.token_get()
        self.assert_throttled(again)
        self.assertRegex(again.stderr, rb"try again in (59|60) s")
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assert_still_signed_in()

    def test_X07_429_forms_of_the_wait(self):
        """`Retry-After` seconds, an HTTP date, Okta's `X-Rate-Limit-Reset`, none (the default
        hold), and a proxy's HTML 429: each is one request, then a hold; nothing is retried at once."""
        def date(seconds):
            return email.utils.formatdate(time.time() + seconds, usegmt=True)
        cases = [
            (lambda: {"kind": "status", "status": 429, "retry_after": 30}, rb"try again in (29|30) s"),
            (lambda: {"kind": "status", "status": 429, "headers": {"Retry-After": date(40)}}, rb"try again in (3[89]|40) s"),
            (lambda: {"kind": "json", "status": 429, "body": {"errorCode": "E0000047"},
                      "headers": {"X-Rate-Limit-Reset": str(int(time.time()) + 50)}}, rb"try again in (49|50) s"),
            (lambda: {"kind": "status", "status": 429}, rb"try again in (29|30) s"),
            (lambda: {"kind": "html", "status": 429, "headers": {"Retry-After": "20"}}, rb"try again in (19|20) s"),
        ]
        for make_spec, wait in cases:
            with self.subTest(spec=make_spec()):
                self.run_broker("logout", "work")
                self.rt = self.signed_in_with_expired_token(200)
                before = len(self.refresh_requests())
                self.emu.add_fault(endpoint="token", grant_type="refresh_token", **make_spec())
                r = self.token_get()
                self.assert_throttled(r)
                self.assertRegex(r.stderr, wait)
                self.assertEqual(len(self.refresh_requests()), before + 1)
                self.assert_still_signed_in()
                self.assert_throttled(self.token_get())
                self.assertEqual(len(self.refresh_requests()), before + 1)

    def test_X07_twenty_concurrent_callers_share_the_hold(self):
        """The hold is shared: 20 concurrent callers during it make no request and each ends
        quickly (the bound here is generous: it only says none of them waited for the hold)."""
        self.emu.add_fault("status", endpoint="token", grant_type="refresh_token", status=429, retry_after=30)
        self.assert_throttled(self.token_get())
        procs = [subprocess.Popen([TOKENBROKER, "token", "get", "work"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=self.env()) for _ in range(20)]
        started = time.monotonic()
        for p in procs:
            out, err = p.communicate(timeout=60)
            self.assertEqual((p.returncode, out), (4, b""), err)
            self.assertIn(b"is throttling requests for 'work'", err)
        self.assertLess(time.monotonic() - started, 20)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assert_still_signed_in()
        # git's helper honours it too, and says so in one line.
        git = self.run_broker("get", input="protocol=https\nhost=git.example.test\n\n")
        self.assertEqual(git.returncode, 4, git.stderr)
        self.assertEqual(len(self.refresh_requests()), 1)

    def test_X07_a_new_sign_in_ends_the_hold(self):
        self.emu.add_fault("status", endpoint="token", grant_type="refresh_token", status=429, retry_after=300)
        self.assert_throttled(self.token_get())
        self.rt = self.signed_in_with_expired_token(200)
        r = self.token_get()
        self.assertEqual(r.returncode, 0, r.stderr)


class ThrottleWithoutAgentTest(ThrottleTest):
    """The same, every call its own process (the hold is a file beside the refresh lock)."""
    agent = "off"



if __name__ == "__main__":
    unittest.main()
