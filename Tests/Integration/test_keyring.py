"""Every keyring state of keyring-notes.md, against a real gnome-keyring (or the fake
Secret Service where gnome-keyring cannot show the failure): each gives its own one-line message
and exit 5, never "not signed in", and never deletes (interface.md §6, §7; bug-cases.md B01, B03,
B05).
"""
import json
import os
import time
import unittest

from harness import HERE, BrokerTestCase, Bus
from keyring_providers import each_provider

GIT_GET = "protocol=https\nhost=git.example.test\n\n"
FAKE_SERVICE = os.path.join(HERE, "fake_secret_service.py")
needs_fake = unittest.skipUnless(os.path.exists(FAKE_SERVICE), "fake_secret_service.py is not there yet")

# What every keyring failure must never say: it is not a reason to sign in again.
NOT_SIGNED_IN = b"not signed in"


class KeyringTestCase(BrokerTestCase):
    emulator_options = {"device_code_interval": 1}

    def signed_in(self):
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)

    def refresh_token_secret(self):
        items = [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"]
        self.assertEqual(len(items), 1, items)
        return items[0].get("secret")

    def assert_store_failure(self, r, *words):
        """Exit 5, nothing on stdout, one stderr line naming the cause, never "not signed in"."""
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("tokenbroker: "), lines)
        for w in words:
            self.assertIn(w, lines[0])
        self.assertNotIn(NOT_SIGNED_IN, r.stderr)

    def seed_refresh_tokens(self, *tokens):
        """A --seed file for the fake service: one refresh-token item of `work` per token, each
        registered at the emulator, the later ones newer (`Modified`)."""
        items = []
        for i, token in enumerate(tokens):
            self.emu.add_refresh_token(token)
            doc = {"v": 1, "refresh_token": token, "identity": "user1@example.test", "obtained_at": 1700000000}
            items.append({"label": "tokenbroker: work (azure) refresh-token", "modified": 1700000000 + 100 * i,
                          "attributes": {"xdg:schema": "org.tokenbroker.Secret", "application": "tokenbroker",
                                         "account": "work", "kind": "refresh-token"},
                          "secret": json.dumps(doc)})
        path = os.path.join(self.tmp, "seed.json")
        with open(path, "w") as f:
            json.dump(items, f)
        return path

    def fake_log(self):
        path = os.path.join(self.tmp, "fake.log")
        with open(path, "a"):
            pass
        return path

    def issued_refresh_tokens(self):
        return [t["token"] for t in self.emu.state()["refresh_tokens"]]

    def files_containing(self, needles, roots):
        """Paths of regular files under `roots` holding any of `needles`."""
        hits = []
        for root in roots:
            for d, _, files in os.walk(root):
                for name in files:
                    path = os.path.join(d, name)
                    try:
                        if not os.path.isfile(path) or os.path.getsize(path) > 8 << 20:
                            continue
                        with open(path, "rb") as f:
                            data = f.read()
                    except OSError:
                        continue
                    if any(n.encode() in data for n in needles):
                        hits.append(path)
        return hits


@each_provider
class LockedKeyringTest(KeyringTestCase):

    def test_locked_keyring_refuses_and_keeps_the_refresh_token(self):
        """B01: a locked collection is "locked" (exit 5) for `token get`, `accounts` and git
        `get`, with no provider request; `erase` deletes nothing; after unlocking, the same
        refresh token works again."""
        self.signed_in()
        rt_doc = self.refresh_token_secret()
        cached = [json.loads(i["secret"])["access_token"] for i in self.keyring_items("work")
                  if i["attributes"].get("kind") == "access-token"]
        self.assertEqual(len(cached), 1)
        before = len(self.emu.requests())
        items_before = sorted(json.dumps(i, sort_keys=True) for i in self.keyring_items())
        self.keyring_service.lock()
        self.assertTrue(self.keyring_service.locked())

        self.assert_store_failure(self.run_broker("token", "get", "work"), "locked")
        self.assert_store_failure(self.run_broker("token", "get", "work", "--force-refresh"), "locked")
        self.assert_store_failure(self.run_broker("get", input=GIT_GET), "locked")
        self.assert_store_failure(self.run_broker("get", argv0="git-credential-tokenbroker", input=GIT_GET),
                                  "locked")
        self.assert_store_failure(self.run_broker("accounts"), "locked")
        self.assert_store_failure(self.run_broker("logout", "work"), "locked")
        for body in ("", "username=user1@example.test\npassword=AT_UNKNOWN\n",
                     f"password={cached[0]}\n"):
            with self.subTest(erase=body):
                e = self.run_broker("erase", input=GIT_GET.rstrip("\n") + "\n" + body + "\n")
                self.assertIn(e.returncode, (0, 5), e.stderr)
                self.assertEqual(e.stdout, b"")
                self.assertNotIn(NOT_SIGNED_IN, e.stderr)
        self.assertEqual(len(self.emu.requests()), before)

        self.keyring_service.unlock()
        self.assertEqual(self.refresh_token_secret(), rt_doc)
        items_after = sorted(json.dumps(i, sort_keys=True) for i in self.keyring_items())
        self.assertEqual(items_after, items_before)  # the access-token item too
        r = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
        refreshes = self.emu.requests(grant_type="refresh_token")
        self.assertEqual(len(refreshes), 1)
        self.assertIn(refreshes[0]["form"]["refresh_token"], rt_doc)

    def test_login_into_locked_keyring_fails_without_plaintext(self):
        """B01, B05: `login` off a terminal never unlocks: a locked collection is exit 5
        "locked" before any device code is requested, and the old refresh token stays."""
        self.signed_in()
        rt_doc = self.refresh_token_secret()
        issued = self.issued_refresh_tokens()
        device_codes = len(self.emu.requests(endpoint="devicecode"))
        self.keyring_service.lock()
        rc, out, err = self.login(approve=False)
        self.assertEqual(rc, 5, err)
        self.assertIn(b"locked", err)
        self.assertNotIn(b"signed in to", out)
        self.assertEqual(len(self.emu.requests(endpoint="devicecode")), device_codes)
        self.keyring_service.unlock()
        self.assertEqual(self.refresh_token_secret(), rt_doc)
        self.assertEqual(self.issued_refresh_tokens(), issued)


class LockedOnDiskTest(KeyringTestCase):
    """gnome-keyring's own case: a daemon started with the wrong password."""

    def test_keyring_locked_on_disk_is_locked_not_signed_out(self):
        """B01 (keyring-notes.md: daemon started with a wrong password): the login keyring stays
        locked on disk, its items showing only hashed attributes: `token get`, git `get`,
        `accounts` and `logout` say "locked" (exit 5), never "not signed in"; with the right
        password the same refresh token works again."""
        self.signed_in()
        rt_doc = self.refresh_token_secret()
        self.bus.replace_keyring("wrong password")
        self.assertTrue(self.bus.collection_locked())
        before = len(self.emu.requests())
        self.assert_store_failure(self.run_broker("token", "get", "work"), "locked")
        self.assert_store_failure(self.run_broker("get", input=GIT_GET), "locked")
        self.assert_store_failure(self.run_broker("accounts"), "locked")
        self.assert_store_failure(self.run_broker("logout", "work"), "locked")
        self.assertEqual(len(self.emu.requests()), before)
        self.bus.unlock_login_collection()
        self.assertEqual(self.refresh_token_secret(), rt_doc)
        r = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(self.emu.requests(grant_type="refresh_token")[-1]["form"]["refresh_token"], rt_doc)


class FakeLockedTest(KeyringTestCase):
    keyring = False

    @needs_fake
    def test_locked_collection_raises_no_prompt_and_deletes_nothing(self):
        """B01, B02: the fake's collection is locked and any prompt would complete dismissed:
        `token get` and git `get` exit 5 "locked" without calling Unlock or a prompt, and
        without CreateItem or Delete; no provider request; `logout` deletes nothing either."""
        log = self.fake_log()
        self.bus.start_fake_secret_service("normal", seed=self.seed_refresh_tokens("RT-LOCKED-SENTINEL-1"),
                                           locked=True, log=log)
        before = len(self.emu.requests())
        self.assert_store_failure(self.run_broker("token", "get", "work"), "locked")
        self.assert_store_failure(self.run_broker("get", input=GIT_GET), "locked")
        self.assert_store_failure(self.run_broker("get", argv0="git-credential-tokenbroker", input=GIT_GET),
                                  "locked")
        self.assert_store_failure(self.run_broker("logout", "work"), "locked")
        self.assertEqual(len(self.emu.requests()), before)
        with open(log) as f:
            calls = f.read()
        self.assertIn("SearchItems", calls)
        for forbidden in ("Unlock", "Prompt", "CreateItem", "Delete", "SetSecret"):
            self.assertNotIn(forbidden, calls)


class NoSecretServiceTest(KeyringTestCase):
    keyring = False

    def test_activation_without_collection(self):
        """keyring-notes.md: session bus, gnome-keyring started by D-Bus activation, no
        collection: a lookup is "not signed in" (exit 3); a login fails before the device flow
        (exit 5 naming the missing collection) and writes no plaintext."""
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn(b"tokenbroker login work", r.stderr)
        rc, out, err = self.login(approve=False)
        self.assertEqual(rc, 5, err)
        self.assertIn(b"no keyring collection", err)
        self.assertEqual(err.count(b"\n"), 1, err)  # the failure only: no device code was requested
        self.assertEqual(self.emu.requests(endpoint="devicecode"), [])
        self.assertEqual(self.issued_refresh_tokens(), [])

    def test_no_session_bus(self):
        """keyring-notes.md, B05: no session bus and no display: exit 5 naming the cause,
        never "not signed in", never a plaintext fallback."""
        env = self.env(DBUS_SESSION_BUS_ADDRESS=None, DISPLAY=None, WAYLAND_DISPLAY=None)
        r = self.run_broker("token", "get", "work", env=env)
        self.assert_store_failure(r, "Secret Service")
        self.assertRegex(r.stderr, rb"D-Bus|DISPLAY|bus")
        self.assert_store_failure(self.run_broker("get", input=GIT_GET, env=env), "Secret Service")

    def test_bus_address_pointing_nowhere(self):
        """keyring-notes.md: a bus address that points nowhere: exit 5 naming the cause."""
        env = self.env(DBUS_SESSION_BUS_ADDRESS="unix:path=" + os.path.join(self.tmp, "nonexistent"))
        self.assert_store_failure(self.run_broker("token", "get", "work", env=env), "Secret Service")
        self.assert_store_failure(self.run_broker("logout", "work", env=env), "Secret Service")


_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={dir}</listen>
  <servicedir>{services}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
  <limit name="service_start_timeout">120000</limit>
</busconfig>
"""


class UnansweredSecretServiceTest(KeyringTestCase):
    """B03: a Secret Service that never answers ends within the store's bound (10 s)."""
    keyring = False
    BOUND = 30  # the 10 s bound plus generous slack; not a speed goal

    def timed(self, *args, **kw):
        start = time.monotonic()
        r = self.run_broker(*args, timeout=self.BOUND + 30, **kw)
        return r, time.monotonic() - start

    def test_activation_that_never_finishes(self):
        """B03(a): the bus activates a `.service` whose Exec sleeps forever: `token get` ends
        with exit 5 "did not answer" within the bound and deletes nothing."""
        d = os.path.join(self.tmp, "hangbus")
        services = os.path.join(d, "services")
        os.makedirs(services)
        pidfile = os.path.join(d, "pid")
        script = os.path.join(d, "hang.sh")
        with open(script, "w") as f:
            f.write(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 600\n")
        os.chmod(script, 0o755)
        with open(os.path.join(services, "org.freedesktop.secrets.service"), "w") as f:
            f.write(f"[D-BUS Service]\nName=org.freedesktop.secrets\nExec={script}\n")
        config = os.path.join(d, "bus.conf")
        with open(config, "w") as f:
            f.write(_BUS_CONFIG.format(dir=d, services=services))
        bus = Bus(self.home, config_file=config)
        self.addCleanup(bus.close)
        self.addCleanup(self._kill_pidfile, pidfile)
        r, took = self.timed("token", "get", "work", env=self.env(DBUS_SESSION_BUS_ADDRESS=bus.address))
        self.assert_store_failure(r, "did not answer")
        self.assertLess(took, self.BOUND)
        self.assertTrue(os.path.exists(pidfile), "the service was never activated")

    @staticmethod
    def _kill_pidfile(pidfile):
        try:
            with open(pidfile) as f:
                os.kill(int(f.read().strip()), 9)
        except (OSError, ValueError):
            pass

    @needs_fake
    def test_service_that_never_replies(self):
        """B03(b): the fake Secret Service owns the name but never replies: `token get` ends with
        exit 5 "did not answer" within the bound."""
        self.bus.start_fake_secret_service("hang")
        r, took = self.timed("token", "get", "work")
        self.assert_store_failure(r, "did not answer")
        self.assertLess(took, self.BOUND)


class ReadBackTest(KeyringTestCase):
    keyring = False

    @needs_fake
    def test_wrong_value_read_back_fails_login_without_plaintext(self):
        """B05: the service stores but reads back another value: `login` exits 5 "did not read
        back", and the refresh token appears in no file under the private HOME/XDG/runtime dirs."""
        self.bus.start_fake_secret_service("wrong-value")
        rc, out, err = self.login()
        self.assertEqual(rc, 5, err)
        self.assertIn(b"did not read back", err)
        self.assertNotIn(b"signed in to", out)
        issued = self.issued_refresh_tokens()
        self.assertTrue(issued)
        self.assertEqual(self.files_containing(issued, [self.tmp]), [])
        for t in issued:
            self.assertNotIn(t.encode(), err)


if __name__ == "__main__":
    unittest.main()
