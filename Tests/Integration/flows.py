"""Helpers for the sign-in and token tests (test_login*.py, test_token_get*.py), on top of
harness.BrokerTestCase: a device-code login that approves exactly its own code, the secrets the
emulator handed out (for leak checks), the stored refresh token, and a file grep for sentinels.
"""
import json
import os
import re
import subprocess
import time

from harness import TOKENBROKER, Bus, BrokerTestCase

GIT_GET = "protocol=https\nhost=git.example.test\n\n"
NO_ACTIVATION_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <servicedir>{service_dir}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


class FlowTestCase(BrokerTestCase):
    """BrokerTestCase plus helpers for device-code logins, token requests and leak checks."""

    # --- login

    def start_login(self, account="work", *extra):
        """Starts `tokenbroker login ACCOUNT --device-code` in the background (caller waits)."""
        p = subprocess.Popen([TOKENBROKER, "login", account, "--device-code", *extra],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env())
        self.addCleanup(self._reap, p)
        return p

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

    def wait_for_device_code(self, seen=0, timeout=30):
        """Waits until more than `seen` device codes were issued; returns the newest one's summary."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            done = [r for r in self.emu.requests(endpoint="devicecode") if r["status"] == 200]
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
        service_dir = os.path.join(self.tmp, "dbus-services")
        os.makedirs(service_dir, exist_ok=True)
        config = os.path.join(self.tmp, "dbus-session.conf")
        with open(config, "w") as f:
            f.write(NO_ACTIVATION_BUS_CONFIG.format(service_dir=service_dir))
        self.bus.close()
        self.bus = Bus(self.home, config_file=config)
