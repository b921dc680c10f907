"""A refresh token kept in a collection other than the one the `default` alias names
(bug-cases-4.md Y17: KeePassXC moves `default` with the active database): a rotated token is
written where its predecessor is, so it can be read back and the old copy removed, and the
account is never left signed out (interface.md §7, §8).
"""
import json
import re
import subprocess
import unittest

from harness import SYSTEM_PYTHON
from test_keyring import KeyringTestCase

# gnome-keyring's own interface for what a desktop would do with prompts: `create` makes a
# collection with a password and moves the `default` alias to it (what KeePassXC does when the user
# switches to another database, which locks after 15 minutes without use); `default PATH` moves
# the alias, `lock PATH` locks, `unlock PATH` unlocks the collection made by `create`.
COLLECTIONS = r"""
import sys
import dbus
bus = dbus.SessionBus()
obj = bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets")
service = dbus.Interface(obj, "org.freedesktop.Secret.Service")
internal = dbus.Interface(obj, "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface")
_, session = service.OpenSession("plain", dbus.String("", variant_level=1))
master = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"second"), "text/plain"), signature="oayays")
what, path = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
if what == "create":
    path = internal.CreateWithMasterPassword({"org.freedesktop.Secret.Collection.Label": dbus.String("Second")}, master)
    service.SetAlias("default", path)
elif what == "default":
    service.SetAlias("default", path)
elif what == "lock":
    service.Lock([path])
elif what == "unlock":
    internal.UnlockWithMasterPassword(path, master)
print(path)
"""
LOGIN = "/org/freedesktop/secrets/collection/login"


class CollectionsTestCase(KeyringTestCase):

    def collections(self, *args):
        r = subprocess.run([SYSTEM_PYTHON, "-c", COLLECTIONS] + list(args), env=self.bus.env(),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()


class DefaultElsewhereTest(CollectionsTestCase):
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "reject"}

    def second_default(self, state):
        """A second collection, `default` now, locked when `state` says so; its path."""
        second = self.collections("create")
        if state == "locked":
            self.collections("lock", second)
        return second

    def refresh_token_paths(self):
        """The D-Bus paths of the refresh-token items of `work`, locked ones included."""
        r = self.bus.call("--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
                          "--method", "org.freedesktop.Secret.Service.SearchItems",
                          "{'application': 'tokenbroker', 'account': 'work', 'kind': 'refresh-token'}")
        self.assertEqual(r.returncode, 0, r.stderr)
        return re.findall(r"'(/org/freedesktop/secrets/collection/[^']+)'", r.stdout)

    def check_rotated_into_login(self, state):
        self.signed_in()
        self.assertEqual([p.rsplit("/", 1)[0] for p in self.refresh_token_paths()],
                         [LOGIN])
        second = self.second_default(state)
        r = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(r.returncode, 0, r.stderr)
        paths = self.refresh_token_paths()
        self.assertEqual([p.rsplit("/", 1)[0] for p in paths], [LOGIN],
                         "default is %s" % second)
        stored = json.loads(self.refresh_token_secret())["refresh_token"]
        again = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(again.returncode, 0, again.stderr)
        sent = [q["form"]["refresh_token"] for q in self.emu.requests(grant_type="refresh_token")]
        self.assertEqual(sent[-1], stored)

    def test_Y17_a_rotated_token_goes_where_its_predecessor_is_while_default_names_a_locked_collection(self):
        """`default` names another, locked collection: the refresh neither fails after spending
        the token (exit 5, the rotated token lost) nor refuses: it writes into `login`."""
        self.check_rotated_into_login("locked")

    def test_Y17_a_rotated_token_stays_in_its_collection_when_default_moves_to_an_unlocked_one(self):
        """`default` names another, unlocked collection: the rotated token is written into `login`,
        where its predecessor was, not into the other collection (which KeePassXC locks later)."""
        self.check_rotated_into_login("unlocked")


class LockedCopyTest(CollectionsTestCase):
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "revoke-family"}

    def test_Y17_no_refresh_from_an_unlocked_copy_while_another_copy_is_locked(self):
        """The refresh token in `login` is a stale copy (already redeemed) and the live one is in a
        second collection, locked: the refresh sends neither (exit 5, locked), since the stale one
        would make a provider that revokes a grant on reuse revoke the live one too. Once the
        second collection is unlocked, the newer copy is used and the account works."""
        self.signed_in()
        items = [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"]
        stale = self.refresh_token_secret()
        r = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(r.returncode, 0, r.stderr)
        live = self.refresh_token_secret()
        second = self.collections("create")
        self.put_back(items[0], live)  # into the second collection, `default` now
        self.collections("default", LOGIN)
        self.put_back(items[0], stale)  # replaces the live copy in `login`
        self.collections("lock", second)
        sent = len(self.emu.requests(grant_type="refresh_token"))
        self.assert_store_failure(self.run_broker("token", "get", "work", "--force-refresh"), "locked")
        self.assertEqual(len(self.emu.requests(grant_type="refresh_token")), sent)
        self.collections("unlock", second)
        again = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(self.emu.requests(grant_type="refresh_token")[-1]["form"]["refresh_token"],
                         json.loads(live)["refresh_token"])


if __name__ == "__main__":
    unittest.main()
