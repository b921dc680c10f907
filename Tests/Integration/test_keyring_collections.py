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

# gnome-keyring's own interface for making a collection with a password and no prompt, then the
# `default` alias moved to it, and the collection locked when asked: what KeePassXC does when the
# user switches to another database (which locks after 15 minutes without use).
SECOND_COLLECTION = r"""
import sys
import dbus
bus = dbus.SessionBus()
obj = bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets")
service = dbus.Interface(obj, "org.freedesktop.Secret.Service")
_, session = service.OpenSession("plain", dbus.String("", variant_level=1))
internal = dbus.Interface(obj, "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface")
master = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"second"), "text/plain"), signature="oayays")
path = internal.CreateWithMasterPassword({"org.freedesktop.Secret.Collection.Label": dbus.String("Second")}, master)
service.SetAlias("default", path)
if sys.argv[1] == "locked":
    service.Lock([path])
print(path)
"""


class DefaultElsewhereTest(KeyringTestCase):
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "reject"}

    def second_default(self, state):
        r = subprocess.run([SYSTEM_PYTHON, "-c", SECOND_COLLECTION, state], env=self.bus.env(),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

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
                         ["/org/freedesktop/secrets/collection/login"])
        second = self.second_default(state)
        r = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(r.returncode, 0, r.stderr)
        paths = self.refresh_token_paths()
        self.assertEqual([p.rsplit("/", 1)[0] for p in paths], ["/org/freedesktop/secrets/collection/login"],
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


if __name__ == "__main__":
    unittest.main()
