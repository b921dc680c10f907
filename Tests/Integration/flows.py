"""Helpers for the sign-in and token tests (test_login*.py, test_token_get*.py), on top of
harness.BrokerTestCase: a device-code login that approves exactly its own code, the secrets the
emulator handed out (for leak checks), the stored refresh token, and a file grep for sentinels.
"""
import json
import os
import re
import subprocess
import threading
import time

from harness import TOKENBROKER, Bus, BrokerTestCase

# The user code in the device prompt that `login --device-code` writes to stderr.
USER_CODE = re.compile(rb"enter the code ([A-Za-z0-9-]+)")
GIT_GET = "protocol=https\nhost=git.example.test\n\n"

class FlowTestCase(BrokerTestCase):
    """BrokerTestCase plus helpers for device-code logins, token requests and leak checks."""

    # --- login

    def start_login(self, account="work", *extra):
        """Starts `tokenbroker login ACCOUNT --device-code` in the background (caller waits)."""
        p = subprocess.Popen([TOKENBROKER, "login", account, "--device-code", *extra],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env())
        self.addCleanup(self._reap, p)
        return p

    def device_login_approved_by(self, approve, account="corp", timeout=60):
        """`login ACCOUNT --device-code` against a real provider: waits for the user code on
        stderr, calls `approve(user_code)` (the provider's own verification, played over its
        API), and returns the CompletedProcess (bytes stdout/stderr)."""
        p = self.start_login(account)
        seen = bytearray()
        found = threading.Event()

        def read():
            for line in p.stderr:
                seen.extend(line)
                if USER_CODE.search(seen):
                    found.set()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        self.assertTrue(found.wait(timeout), bytes(seen))
        approve(USER_CODE.search(seen).group(1).decode())
        out = p.stdout.read()
        p.wait(timeout)
        reader.join(10)
        return subprocess.CompletedProcess(p.args, p.returncode, out, bytes(seen))

    @staticmethod
    def _reap(p):
        if p.poll() is None:
            p.kill()
        p.communicate()

    @staticmethod
    def finish(p, timeout=60):
        """Waits for a started process; returns a CompletedProcess (bytes stdout/stderr)."""
        out, err = p.communicate(timeout=timeout)
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def device_codes_requested(self):
        return len(self.emu.requests(endpoint="devicecode"))

    def wait_for_device_code(self, seen=0, timeout=30, endpoint="devicecode"):
        """Waits until more than `seen` device codes were issued (at `endpoint`: Google's is
        "google.devicecode"); returns the newest one's summary."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            done = [r for r in self.emu.requests(endpoint=endpoint) if r["status"] == 200]
            if len(done) > seen:
                return self.emu.device_code(done[-1]["response"]["user_code"])
            time.sleep(0.05)
        raise AssertionError("no device code was requested within %d s" % timeout)

    def login_and_approve(self, account="work", *extra, timeout=60):
        """A device-code login that approves its own code (never an older pending one).
        Returns a CompletedProcess."""
        seen = len([r for r in self.emu.requests(endpoint="devicecode") if r["status"] == 200])
        p = self.start_login(account, *extra)
        dc = self.wait_for_device_code(seen)
        self.emu.approve(dc["user_code"])
        return self.finish(p, timeout)

    def signed_in(self):
        """Logs in (approved) and returns the refresh token now stored."""
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        return self.stored_refresh_token()

    # --- keyring

    def items_of_kind(self, kind, account="work"):
        return [i for i in self.keyring_items(account) if i["attributes"].get("kind") == kind]

    def stored_refresh_token(self, account="work"):
        """The refresh token in the keyring, or None; fails on more than one item."""
        items = self.items_of_kind("refresh-token", account)
        self.assertLessEqual(len(items), 1, items)
        return json.loads(items[0]["secret"])["refresh_token"] if items else None

    def item_paths(self, **attributes):
        """(unlocked, locked) object paths of items with application=tokenbroker (and the given
        attributes), from the Secret Service's SearchItems: works on a locked collection, needs
        no prompt and reads no secret."""
        query = dict(application="tokenbroker", **attributes)
        arg = "{" + ", ".join("'%s': '%s'" % kv for kv in query.items()) + "}"
        r = self.bus.call("--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
                          "--method", "org.freedesktop.Secret.Service.SearchItems", arg)
        self.assertEqual(r.returncode, 0, r.stderr)
        # e.g. `([objectpath '/org/freedesktop/secrets/collection/login/1'], @ao [])`
        lists = re.findall(r"\[([^\]]*)\]", r.stdout)
        self.assertEqual(len(lists), 2, r.stdout)
        unlocked, locked = (re.findall(r"'(/[^']*)'", text) for text in lists)
        return unlocked, locked

    def cached_access_tokens(self, account="work"):
        """{scopes attribute: access token} of the account's cached access-token items."""
        return {i["attributes"].get("scopes"): json.loads(i["secret"])["access_token"]
                for i in self.items_of_kind("access-token", account)}

    def signed_in_with_expired_token(self, lifetime=3600):
        """A device-code login whose cached access token has expired (it lived 1 s), then access
        tokens that live `lifetime` seconds again. Returns the stored refresh token."""
        self.emu.configure(access_token_lifetime=1)
        rt = self.signed_in()
        self.emu.configure(access_token_lifetime=lifetime)
        time.sleep(1.2)
        return rt

    # --- emulator

    def refresh_requests(self):
        return self.emu.requests(grant_type="refresh_token")

    def known_secrets(self):
        """Every token and device code the emulator handed out or was sent, for leak checks."""
        found = set()
        for entry in self.emu.requests():
            form = entry.get("form") or {}
            for key in ("refresh_token", "device_code", "code", "code_verifier"):
                if form.get(key):
                    found.add(form[key])
            response = entry.get("response")
            if isinstance(response, dict):
                for key in ("access_token", "refresh_token", "device_code", "id_token"):
                    if response.get(key):
                        found.add(response[key])
        return sorted(found)

    def assert_no_secret_leak(self, *results, extra=()):
        """B29: no known secret in any result's stderr, in the stdout of failed results, or in
        keyring attributes and labels."""
        outputs = []
        for r in results:
            outputs.append(r.stderr)
            if r.returncode != 0:
                outputs.append(r.stdout)
        secrets = list(self.known_secrets()) + list(extra)
        self.assertTrue(secrets, "no secrets known to check")
        self.assert_no_leak(*secrets, outputs=outputs)

    # --- messages

    def message_lines(self, stderr):
        """stderr lines other than the device-code prompt of `login`."""
        return [line for line in stderr.decode(errors="replace").splitlines()
                if not line.startswith("tokenbroker: to sign in to ")]

    # --- files

    def files_containing(self, secrets, roots, newer_than=None):
        """Regular files under `roots` (modified at or after `newer_than`, if given) whose bytes
        contain any of `secrets`."""
        hits = []
        needles = [s.encode() for s in secrets]
        for root in roots:
            for dirpath, _, filenames in os.walk(root, onerror=lambda e: None):
                for name in filenames:
                    path = os.path.join(dirpath, name)
                    try:
                        st = os.lstat(path)
                        if not os.path.isfile(path) or os.path.islink(path) or st.st_size > 16 << 20:
                            continue
                        if newer_than is not None and st.st_mtime < newer_than and st.st_ctime < newer_than:
                            continue
                        with open(path, "rb") as f:
                            data = f.read()
                    except OSError:
                        continue
                    if any(n in data for n in needles):
                        hits.append(path)
        return hits

    def use_bus_without_secret_service(self):
        """Replaces the test's bus with one that cannot activate any service: no Secret Service
        at all (keyring-notes.md, "session bus, no daemon running" without activation)."""
        self.bus.close()
        self.bus = Bus.without_activation(self.home, os.path.join(self.tmp, "dbus"))


# --- browser sign-in (test_browser_login.py, test_google.py, test_revoke.py) ---------------------

FAKE_BROWSER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_browser.py")
GOOGLE_CLIENT_ID = "1234-abc.apps.googleusercontent.com"
GOOGLE_CLIENT_SECRET = "GOCSPX-SENTINEL-desktop-secret"
GOOGLE_DEVICE_CLIENT_ID = "5678-tv.apps.googleusercontent.com"
GOOGLE_DEVICE_CLIENT_SECRET = "GOCSPX-SENTINEL-device-secret"


class BrowserFlows:
    """Mixin for FlowTestCase: the fake browser (fake_browser.py) and Google accounts."""

    def fake_browser(self, **spec):
        """Writes a spec for fake_browser.py; returns (the `browser` command, the log path)."""
        n = len([f for f in os.listdir(self.tmp) if f.startswith("browser-spec-")])
        log = os.path.join(self.tmp, "browser-log-%d.jsonl" % n)
        path = os.path.join(self.tmp, "browser-spec-%d.json" % n)
        spec = dict({"ca_file": self.ca_file, "log": log}, **spec)
        with open(path, "w") as f:
            json.dump(spec, f)
        open(log, "a").close()
        self.addCleanup(self._kill_browsers, log)
        return "%s %s" % (FAKE_BROWSER, path), log

    @staticmethod
    def browser_events(log, event=None):
        with open(log) as f:
            events = [json.loads(line) for line in f if line.strip()]
        return [e for e in events if event is None or e["event"] == event]

    def wait_for_browser_event(self, log, event, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = self.browser_events(log, event)
            if found:
                return found[-1]
            time.sleep(0.05)
        raise AssertionError("the fake browser logged no %r: %r" % (event, self.browser_events(log)))

    @staticmethod
    def _kill_browsers(log):
        """Ends every launcher this test started (they run in their own sessions)."""
        try:
            events = BrowserFlows.browser_events(log, "started")
        except OSError:
            return
        for e in events:
            if e["pgid"] == os.getpgid(0):  # run by the test itself, not detached by tokenbroker
                continue
            try:
                os.killpg(e["pgid"], 9)
            except OSError:
                pass

    def start_browser_login(self, account="work", *extra, browser=None, env=None):
        """Starts `tokenbroker login ACCOUNT --browser EXTRA` with TOKENBROKER_BROWSER=browser."""
        env = dict(env or self.env())
        if browser:
            env["TOKENBROKER_BROWSER"] = browser
        p = subprocess.Popen([TOKENBROKER, "login", account, "--browser", *extra],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
        self.addCleanup(self._reap, p)
        return p

    def browser_login(self, account="work", *extra, timeout=60, **spec):
        """A whole browser login with a fake browser doing `spec`; returns (CompletedProcess, log)."""
        browser, log = self.fake_browser(**spec)
        r = self.finish(self.start_browser_login(account, *extra, browser=browser), timeout)
        return r, log

    def google_config(self, name="g", extra=""):
        """An `[account NAME]` group for Google at the emulator's /google endpoints."""
        base = self.emu.base_url + "/google"
        return f"""
[account {name}]
provider = google
client-id = {GOOGLE_CLIENT_ID}
client-secret = {GOOGLE_CLIENT_SECRET}
device-client-id = {GOOGLE_DEVICE_CLIENT_ID}
device-client-secret = {GOOGLE_DEVICE_CLIENT_SECRET}
scopes = openid email https://www.googleapis.com/auth/cloud-platform
authorization-endpoint = {base}/o/oauth2/v2/auth
token-endpoint = {base}/token
device-authorization-endpoint = {base}/device/code
revocation-endpoint = {base}/revoke
userinfo-endpoint = {base}/v1/userinfo
hosts = europe-west1-docker.pkg.dev
{extra}
"""
