"""`tokenbroker login ACCOUNT --browser` against the emulator's Azure /authorize with a fake
browser (fake_browser.py): authorization code + PKCE S256, the loopback redirect listener, the
detached launcher, the timeout, and the per-account lock.

Bug cases (bug-cases.md): B07 (one interactive flow at a time), B24 (launcher output
never reaches our stdout), B25 (never waiting on the launcher), B26 (`state` binding, PKCE, a
replayed redirect), B29 (no secret in any output).
"""
import base64
import hashlib
import os
import pty
import select
import socket
import subprocess
import time
import unittest
import urllib.parse

import fake_browser
from flows import BrowserFlows, FlowTestCase
from harness import TOKENBROKER

AUTH_CODE = "authorization_code"
SIGNED_IN = b"signed in to work as user1@example.test\n"


def s256(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def query_of(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class AzureBrowserLoginTest(BrowserFlows, FlowTestCase):
    emulator_options = {"auto_consent": True}

    def authorize_requests(self):
        return self.emu.requests(endpoint="authorize")

    def code_redemptions(self):
        return self.emu.requests(grant_type=AUTH_CODE)

    def assert_only_our_messages(self, r):
        for line in r.stderr.decode().splitlines():
            self.assertTrue(line.startswith("tokenbroker: "), r.stderr)

    def test_sign_in_end_to_end_with_pkce_and_state(self):
        """The whole flow with the real keyring: the browser gets only the authorize URL (last
        argument, no secret), the redirect URI is http://localhost:PORT/, the token request's
        code_verifier matches the S256 challenge (B26), the refresh token is stored and works."""
        r, log = self.browser_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, SIGNED_IN)
        self.assert_only_our_messages(r)
        started = self.browser_events(log, "started")
        self.assertEqual(len(started), 1)
        self.assertEqual(started[0]["argv_count"], 3)  # fake_browser.py SPEC URL
        self.assertFalse(started[0]["stdin_tty"])
        self.assertEqual(started[0]["sid"], started[0]["pid"])  # its own session
        self.assertEqual(self.wait_for_browser_event(log, "redirect")["status"], 200)
        self.assertIn("received the sign-in", self.wait_for_browser_event(log, "redirect")["page"])

        [authorize] = self.authorize_requests()
        params = authorize["query"]
        self.assertEqual(params["response_type"], "code")
        self.assertEqual(params["code_challenge_method"], "S256")
        self.assertRegex(params["redirect_uri"], r"^http://localhost:\d+/$")
        self.assertGreaterEqual(len(params["state"]), 32)
        self.assertIn("offline_access", params["scope"].split())
        self.assertEqual(query_of(started[0]["url"]), params)

        [redeem] = self.code_redemptions()
        form = redeem["form"]
        self.assertEqual(redeem["status"], 200)
        self.assertEqual(s256(form["code_verifier"]), params["code_challenge"])
        self.assertEqual(form["redirect_uri"], params["redirect_uri"])
        self.assertNotIn("client_secret", form)
        self.assertEqual(self.stored_refresh_token(), redeem["response"]["refresh_token"])
        self.assertNotIn(form["code_verifier"], started[0]["url"])

        t = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertTrue(self.emu.validate_access_token(t.stdout.decode().strip()))
        self.assert_no_secret_leak(r, t)

    def test_wrong_or_missing_state_is_rejected_and_the_flow_keeps_waiting(self):
        """B26: while the login waits, redirects with a wrong state, without state, a favicon and
        a junk path get error pages (400/404) and are never redeemed; the real redirect then
        completes. The listener also answers on ::1 (Azure's localhost) where there is IPv6."""
        probes = [{"query": "code=ATTACKER&state=WRONG"}, {"query": "code=ATTACKER"},
                  {"path": "/favicon.ico"}, {"path": "/robots.txt", "query": "x=1"},
                  {"query": "state=WRONG&error=access_denied"}]
        if ipv6_loopback():
            probes.append({"query": "code=ATTACKER6&state=WRONG", "host": "[::1]"})
        r, log = self.browser_login(probes=probes)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, SIGNED_IN)
        statuses = [e["status"] for e in self.browser_events(log, "probe")]
        self.assertEqual(statuses, [400, 400, 404, 404, 400] + ([400] if len(probes) == 6 else []))
        self.assertIn("does not belong to the sign-in in progress", self.browser_events(log, "probe")[0]["page"])
        codes = [e["form"].get("code") for e in self.code_redemptions()]
        self.assertEqual(len(codes), 1)
        self.assertNotIn("ATTACKER", codes)
        self.assertNotIn("ATTACKER6", codes)
        self.assert_no_secret_leak(r)

    def test_replayed_redirect_is_rejected(self):
        """B26: the listener takes one code and closes (a replay finds nothing listening); the
        same redirect delivered to the next login's listener is refused (its state is not that
        login's), and the emulator redeems the first code exactly once."""
        r1, log1 = self.browser_login(replay=True)
        self.assertEqual(r1.returncode, 0, r1.stderr)
        self.assertEqual(self.wait_for_browser_event(log1, "replay")["status"], "refused")
        first = self.browser_events(log1, "redirect")[0]["location"]
        old_query = urllib.parse.urlsplit(first).query
        old_code = query_of(first)["code"]

        r2, log2 = self.browser_login(probes=[{"query": old_query}])
        self.assertEqual(r2.returncode, 0, r2.stderr)
        self.assertEqual(self.browser_events(log2, "probe")[0]["status"], 400)
        redeemed = [e["form"]["code"] for e in self.code_redemptions()]
        self.assertEqual(len(redeemed), 2)
        self.assertEqual(redeemed.count(old_code), 1)
        self.assert_no_secret_leak(r1, r2)

    def test_pkce_mismatch_is_reported_and_nothing_is_stored(self):
        """B26: the authorize request reaches the provider with another code_challenge: the code
        redemption fails (AADSTS501481), exit 6 naming the PKCE verifier, nothing stored."""
        r, log = self.browser_login(tamper=True)
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = self.message_lines(r.stderr)
        self.assertIn("PKCE", lines[-1])
        self.assertIn("tokenbroker login work", lines[-1])
        [redeem] = self.code_redemptions()
        self.assertEqual(redeem["response"]["error"], "invalid_grant")
        self.assertEqual(self.keyring_items(), [])
        self.assert_no_secret_leak(r)

    def test_declined_consent_exits_6(self):
        """The user cancels at the provider: the redirect carries access_denied with our state:
        the browser shows a failure page, exit 6 "declined", no code redemption, nothing stored."""
        self.emu.configure(auto_consent=False)
        r, log = self.browser_login(decision="decline")
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("declined", self.message_lines(r.stderr)[-1])
        self.assertIn("did not complete", self.wait_for_browser_event(log, "redirect")["page"])
        self.assertEqual(self.code_redemptions(), [])
        self.assertEqual(self.keyring_items(), [])

    def test_launcher_printing_junk_and_failing_changes_nothing(self):
        """B24, B25: a launcher that prints junk on stdout and stderr and exits 3: the login
        completes, our stdout is exactly the result line, and no junk reaches our stderr."""
        r, log = self.browser_login(junk=True, exit_code=3)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, SIGNED_IN)
        self.assertNotIn(b"junk", r.stderr)
        self.assertNotIn(b"existing browser session", r.stderr)
        self.assert_only_our_messages(r)

    def test_launcher_that_never_exits_changes_nothing(self):
        """B25: the launcher does the redirect, then never exits and leaves a child holding the
        descriptors it inherited: we exit at once after the redirect (our pipes reach EOF, so
        nothing of ours was inherited) and never wait for it."""
        r, log = self.browser_login(hang=True, junk=True, timeout=30)
        ended = time.time()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, SIGNED_IN)
        redirect = self.wait_for_browser_event(log, "redirect")
        self.assertLess(ended - redirect["t"], 10)
        pid = self.browser_events(log, "started")[0]["pid"]
        os.kill(pid, 0)  # still running: nobody waited for it

    def test_timeout_exits_6(self):
        """No redirect ever comes: exit 6 after login-timeout with what to do; nothing stored,
        no token request."""
        self.write_config(self.default_config(extra_broker="login-timeout = 2"))
        start = time.time()
        r, log = self.browser_login(action="none", timeout=30)
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertLess(time.time() - start, 20)
        line = self.message_lines(r.stderr)[-1]
        self.assertIn("did not complete within 2 s", line)
        self.assertIn("login-timeout", line)
        self.assertEqual(self.code_redemptions(), [])
        self.assertEqual(self.keyring_items(), [])

    def test_redirect_port_taken_on_ipv6_loopback_only_exits_6_without_a_browser(self):
        """Azure redirects to http://localhost:PORT/, which a browser may try on
        ::1 first; with redirect-port held on [::1] only by another program, login refuses before
        any browser starts (exit 6, one line naming the port) instead of serving 127.0.0.1 alone
        and letting that program receive the code and state."""
        if not ipv6_loopback():
            self.skipTest("no IPv6 loopback on this machine: 127.0.0.1 alone is the documented fallback")
        other = socket.socket(socket.AF_INET6)
        self.addCleanup(other.close)
        other.bind(("::1", 0))
        other.listen(4)
        port = other.getsockname()[1]
        self.write_config(self.default_config(extra_account="redirect-port = %d" % port))
        r, log = self.browser_login(timeout=30)
        self.assertEqual(r.returncode, 6, r.stderr)
        lines = self.message_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("port %d" % port, lines[0])
        self.assertIn("redirect-port", lines[0])
        self.assertEqual(self.browser_events(log, "started"), [])
        self.assertEqual(self.authorize_requests(), [])

    def test_second_concurrent_browser_login_exits_7_without_a_browser(self):
        """B07 with the browser flow: while one login waits for its browser, a second exits 7 at
        once, starts no browser and sends nothing to the provider; the first then completes."""
        go = os.path.join(self.tmp, "go")
        browser1, log1 = self.fake_browser(wait_for=go)
        first = self.start_browser_login(browser=browser1)
        self.wait_for_browser_event(log1, "started")
        browser2, log2 = self.fake_browser()
        start = time.time()
        second = self.finish(self.start_browser_login(browser=browser2), timeout=30)
        self.assertEqual(second.returncode, 7, second.stderr)
        self.assertLess(time.time() - start, 10)
        self.assertIn(b"in progress", second.stderr)
        self.assertEqual(self.browser_events(log2), [])
        self.assertEqual(self.authorize_requests(), [])
        open(go, "w").close()
        r = self.finish(first)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.authorize_requests()), 1)
        self.assertEqual(len(self.browser_events(log1, "started")), 1)

    def test_no_open_prints_the_url_and_starts_no_browser(self):
        """`--no-open`: the URL goes to stderr (a message), no browser starts; a browser run by
        hand on that URL completes the login."""
        browser, log = self.fake_browser()
        p = self.start_browser_login("work", "--no-open", browser=browser)
        url = None
        deadline = time.time() + 30
        buffered = b""
        while url is None and time.time() < deadline:
            buffered += os.read(p.stderr.fileno(), 4096)
            for word in buffered.decode(errors="replace").split():
                if word.startswith(self.emu.base_url) and "/authorize?" in word:
                    url = word
        self.assertIsNotNone(url, buffered)
        self.assertEqual(self.browser_events(log), [])
        manual, manual_log = self.fake_browser()
        subprocess.run(manual.split() + [url], env=self.env(), timeout=60, check=True)
        r = self.finish(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, SIGNED_IN)
        self.assertEqual(self.browser_events(log), [])

    def test_pasting_the_redirect_address_on_a_terminal(self):
        """The browser runs elsewhere: on a terminal the user pastes the address the browser ended
        on; a line that is not this sign-in's redirect gets a hint and the wait goes on."""
        master, slave = pty.openpty()
        p = subprocess.Popen([TOKENBROKER, "login", "work", "--no-open"], stdin=slave, stdout=subprocess.PIPE,
                             stderr=slave, env=self.env())
        self.addCleanup(self._reap, p)
        os.close(slave)
        text = ""

        def read_until(needle, timeout=30):
            nonlocal text
            deadline = time.time() + timeout
            while needle not in text and time.time() < deadline:
                if select.select([master], [], [], 0.2)[0]:
                    text += os.read(master, 4096).decode(errors="replace")
            self.assertIn(needle, text)

        read_until("here")
        self.assertIn("paste the address", text)
        url = next(w for w in text.split() if w.startswith(self.emu.base_url))
        status, headers, _ = fake_browser.request(url, self.ca_file)
        self.assertEqual(status, 302)
        os.write(master, b"https://example.test/?code=X&state=WRONG\n")
        read_until("not the address this sign-in ends on")
        os.write(master, headers["location"].encode() + b"\n")
        out, _ = p.communicate(timeout=60)
        os.close(master)
        self.assertEqual(p.returncode, 0, text)
        self.assertEqual(out, SIGNED_IN)
        self.assertEqual(len(self.code_redemptions()), 1)


class FlowChoiceTest(BrowserFlows, FlowTestCase):
    emulator_options = {"auto_consent": True, "device_code_interval": 1}

    def test_a_display_means_the_browser_and_ssh_the_device_code(self):
        """interface.md §2: without --browser/--device-code, DISPLAY (no SSH) picks the browser;
        DISPLAY with SSH_CONNECTION picks the device code."""
        browser, log = self.fake_browser()
        env = self.env(DISPLAY=":99", TOKENBROKER_BROWSER=browser)
        r = subprocess.run([TOKENBROKER, "login", "work"], env=env, capture_output=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.browser_events(log, "started")), 1)
        self.assertEqual(self.device_codes_requested(), 0)

        env = self.env(DISPLAY=":99", SSH_CONNECTION="10.0.0.1 22 10.0.0.2 22", TOKENBROKER_BROWSER=browser)
        p = subprocess.Popen([TOKENBROKER, "login", "work"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.addCleanup(self._reap, p)
        dc = self.wait_for_device_code()
        self.emu.approve(dc["user_code"])
        r = self.finish(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.browser_events(log, "started")), 1)


if __name__ == "__main__":
    unittest.main()
