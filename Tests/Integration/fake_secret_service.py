#!/usr/bin/python3
"""A fake freedesktop Secret Service for failures gnome-keyring cannot be made to show.

Run with Debian's /usr/bin/python3 (python3-dbus, python3-gi) inside the test's private session
bus (dbus-run-session). It claims org.freedesktop.secrets, prints `ready` on stdout once the name
is owned, and serves until killed.

Modes (--mode):
  normal       a working service with one collection `login` behind the alias `default`
               (plain session algorithm only).
  hang         owns the name but never replies to any method call (bug-cases.md B03b: a Secret
               Service that accepted the connection and never answers).
  wrong-value  CreateItem succeeds, but GetSecret/GetSecrets return another value than was
               stored (B05: a store that does not read back what was written).
  duplicates   normal, pre-seeded from --seed with at least two items with identical attributes
               (B06: leftovers of a crash or of two concurrent writers).

Options:
  --seed FILE  JSON list of items to start with, each
               {"label": str, "attributes": {str: str}, "secret": str, "modified": int (Unix s),
                "locked": bool}; all but attributes and secret are optional.
  --locked     the `login` collection (and every item) starts locked; Unlock returns a prompt
               that completes dismissed (B01/B02), CreateItem fails with IsLocked.
  --log FILE   appends one line per method call: `Interface.Method object-path` (never a secret).
  --refuse-writes FILE  CreateItem fails (org.freedesktop.DBus.Error.Failed) while FILE exists:
               a keyring that reads but will not write, until the test removes FILE.
  --keepassxc  KeePassXC 2.7.4's ways (Debian 12): items named by UUID, not numbered, and a
               CreateItem with `replace` answered with a prompt that never completes (its access
               dialog, which nobody answers: its bug #9255, fixed in 2.7.6).
  --vanish AT  a `logout` racing the caller, which a real gnome-keyring shows
               only now and then: the first Service.SearchItems that finds items is followed by
               the loss of every item. AT `search`: they are gone before the search answers (the
               caller's next call on them, libsecret's property load of each item, finds no
               object); AT `secret`: they go at the first GetSecret/GetSecrets, which then fails
               with NoSuchObject; AT `create`: they go, the new one too, as the first CreateItem
               answers (libsecret's property load of the created item finds no object); AT
               `create-fails`: CreateItem itself fails with NoSuchObject and stores nothing.

Secrets are never printed. Object paths follow gnome-keyring's: /org/freedesktop/secrets,
/org/freedesktop/secrets/collection/login, .../login/N (--keepassxc: .../login/UUID),
/org/freedesktop/secrets/session/N.
"""

import argparse
import json
import os
import sys
import time
import uuid

import dbus
import dbus.lowlevel
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BUS_NAME = "org.freedesktop.secrets"
SERVICE_PATH = "/org/freedesktop/secrets"
COLLECTION_PATH = SERVICE_PATH + "/collection/login"
SERVICE_IFACE = "org.freedesktop.Secret.Service"
COLLECTION_IFACE = "org.freedesktop.Secret.Collection"
ITEM_IFACE = "org.freedesktop.Secret.Item"
SESSION_IFACE = "org.freedesktop.Secret.Session"
PROMPT_IFACE = "org.freedesktop.Secret.Prompt"
PROPS_IFACE = "org.freedesktop.DBus.Properties"


class SecretError(dbus.DBusException):
    def __init__(self, name, message):
        super().__init__(message)
        self._dbus_error_name = name


def locked_error():
    return SecretError("org.freedesktop.Secret.Error.IsLocked", "the collection is locked")


def no_such_object(path):
    return SecretError("org.freedesktop.Secret.Error.NoSuchObject", "no such object: %s" % path)


class State:
    def __init__(self, mode, log_path, vanish=None, keepassxc=False, refuse_writes=None):
        self.mode = mode
        self.refuse_writes = refuse_writes
        self.keepassxc = keepassxc
        self.log_path = log_path
        self.counter = 0
        self.vanish = vanish  # None, "search", "secret" or "create"; cleared once the items are gone
        self.searched = False

    def next_id(self):
        self.counter += 1
        return self.counter

    def log(self, what, path):
        if self.log_path:
            with open(self.log_path, "a") as f:
                f.write("%s %s\n" % (what, path))


class PropertiesObject(dbus.service.Object):
    """An object with read-only D-Bus properties from `properties()`."""

    interface = ""

    def properties(self):
        return {}

    @dbus.service.method(PROPS_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        props = self.properties()
        if name not in props:
            raise SecretError("org.freedesktop.DBus.Error.InvalidArgs", "no property %s" % name)
        return props[name]

    @dbus.service.method(PROPS_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties() if interface in ("", self.interface) else {}

    @dbus.service.method(PROPS_IFACE, in_signature="ssv")
    def Set(self, interface, name, value):
        raise SecretError("org.freedesktop.DBus.Error.PropertyReadOnly", "read-only in the fake")

    @dbus.service.signal(PROPS_IFACE, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Item(PropertiesObject):
    interface = ITEM_IFACE

    def __init__(self, bus, state, collection, path, label, attributes, secret, modified, locked):
        super().__init__(bus, path)
        self.state, self.collection, self.path = state, collection, path
        self.label, self.attributes, self.secret = label, dict(attributes), secret
        self.created = self.modified = int(modified)
        self.locked = locked

    def properties(self):
        return {
            "Locked": dbus.Boolean(self.locked),
            "Attributes": dbus.Dictionary(self.attributes, signature="ss"),
            "Label": dbus.String(self.label),
            "Type": dbus.String("org.freedesktop.Secret.Generic"),
            "Created": dbus.UInt64(self.created),
            "Modified": dbus.UInt64(self.modified),
        }

    def secret_struct(self, session):
        value = self.secret
        if self.state.mode == "wrong-value":
            value = value + b"-not-what-was-stored"
        return dbus.Struct(
            (dbus.ObjectPath(session), dbus.ByteArray(b""), dbus.ByteArray(value), dbus.String("text/plain")),
            signature="oayays")

    @dbus.service.method(ITEM_IFACE, in_signature="o", out_signature="(oayays)")
    def GetSecret(self, session):
        self.state.log("Item.GetSecret", self.path)
        if self.collection.vanish_before_secret():
            raise no_such_object(self.path)
        if self.locked:
            raise locked_error()
        return self.secret_struct(session)

    @dbus.service.method(ITEM_IFACE, in_signature="(oayays)")
    def SetSecret(self, secret):
        self.state.log("Item.SetSecret", self.path)
        if self.locked:
            raise locked_error()
        self.secret = bytes(secret[2])
        self.modified = int(time.time())

    @dbus.service.method(ITEM_IFACE, in_signature="", out_signature="o")
    def Delete(self):
        self.state.log("Item.Delete", self.path)
        if self.locked:
            raise locked_error()
        self.collection.remove(self)
        return dbus.ObjectPath("/")


class Collection(PropertiesObject):
    interface = COLLECTION_IFACE

    def __init__(self, bus, state, locked):
        super().__init__(bus, COLLECTION_PATH)
        self.bus, self.state, self.locked = bus, state, locked
        self.items = []
        self.created = self.modified = int(time.time())

    def properties(self):
        return {
            "Items": dbus.Array([dbus.ObjectPath(i.path) for i in self.items], signature="o"),
            "Label": dbus.String("Login"),
            "Locked": dbus.Boolean(self.locked),
            "Created": dbus.UInt64(self.created),
            "Modified": dbus.UInt64(self.modified),
        }

    def add(self, label, attributes, secret, modified=None, locked=False):
        name = uuid.uuid4().hex if self.state.keepassxc else str(self.state.next_id())
        path = "%s/%s" % (COLLECTION_PATH, name)
        item = Item(self.bus, self.state, self, path, label, attributes, secret,
                    modified if modified is not None else time.time(), locked)
        self.items.append(item)
        self.modified = int(time.time())
        return item

    def remove(self, item):
        self.items.remove(item)
        item.remove_from_connection()
        self.modified = int(time.time())

    def matching(self, attributes):
        return [i for i in self.items if all(i.attributes.get(k) == v for k, v in attributes.items())]

    def vanish_all(self):
        for item in list(self.items):
            self.remove(item)
        self.state.vanish = None

    def vanish_after_search(self, found):
        """--vanish search: every item goes once a search found some."""
        if found and self.state.vanish == "search":
            self.vanish_all()
        elif found and self.state.vanish == "secret":
            self.state.searched = True

    def vanish_before_secret(self):
        """--vanish secret: every item goes at the first secret read after a search found some;
        True when that happened now."""
        if self.state.vanish == "secret" and self.state.searched:
            self.vanish_all()
            return True
        return False

    def set_locked(self, locked):
        self.locked = locked
        for item in self.items:
            item.locked = locked

    @dbus.service.method(COLLECTION_IFACE, in_signature="a{sv}(oayays)b", out_signature="oo")
    def CreateItem(self, properties, secret, replace):
        self.state.log("Collection.CreateItem", self.path_name())
        if self.locked:
            raise locked_error()
        if self.state.vanish == "create-fails":
            raise no_such_object(self.path_name())
        if self.state.refuse_writes and os.path.exists(self.state.refuse_writes):
            raise SecretError("org.freedesktop.DBus.Error.Failed", "the fake refuses writes")
        if replace and self.state.keepassxc:
            path = "%s/prompt/%d" % (SERVICE_PATH, self.state.next_id())
            Prompt(self.bus, path, self.state, "o", answered=False)
            return dbus.ObjectPath("/"), dbus.ObjectPath(path)
        label = str(properties.get(ITEM_IFACE + ".Label", ""))
        attributes = {str(k): str(v) for k, v in properties.get(ITEM_IFACE + ".Attributes", {}).items()}
        value = bytes(secret[2])
        existing = [i for i in self.items if i.attributes == attributes] if replace else []
        if existing:  # gnome-keyring replaces the first item with exactly these attributes
            item = existing[0]
            item.label, item.secret, item.modified = label, value, int(time.time())
        else:
            item = self.add(label, attributes, value)
        if self.state.vanish == "create":
            self.vanish_all()
        return dbus.ObjectPath(item.path), dbus.ObjectPath("/")

    @dbus.service.method(COLLECTION_IFACE, in_signature="a{ss}", out_signature="ao")
    def SearchItems(self, attributes):
        self.state.log("Collection.SearchItems", self.path_name())
        return dbus.Array([dbus.ObjectPath(i.path) for i in self.matching(attributes)], signature="o")

    @dbus.service.method(COLLECTION_IFACE, in_signature="", out_signature="o")
    def Delete(self):
        raise SecretError("org.freedesktop.DBus.Error.NotSupported", "the fake keeps its collection")

    def path_name(self):
        return COLLECTION_PATH


class Session(dbus.service.Object):
    @dbus.service.method(SESSION_IFACE, in_signature="", out_signature="")
    def Close(self):
        self.remove_from_connection()


class Prompt(dbus.service.Object):
    """Completes dismissed, as a prompt without a display does (keyring-notes.md); or, not
    `answered`, never completes (a dialog on a desktop nobody looks at)."""

    def __init__(self, bus, path, state, result_signature, answered=True):
        super().__init__(bus, path)
        self.state = state
        self.result_signature = result_signature  # what Completed carries, e.g. "ao" for Unlock
        self.answered = answered

    @dbus.service.method(PROMPT_IFACE, in_signature="s", out_signature="")
    def Prompt(self, window_id):
        self.state.log("Prompt.Prompt", "")
        if self.answered:
            GLib.idle_add(self.finish)

    @dbus.service.method(PROMPT_IFACE, in_signature="", out_signature="")
    def Dismiss(self):
        GLib.idle_add(self.finish)

    def finish(self):
        self.Completed(True, dbus.Array([], signature=self.result_signature[1:], variant_level=1))
        return False

    @dbus.service.signal(PROMPT_IFACE, signature="bv")
    def Completed(self, dismissed, result):
        pass


class Service(PropertiesObject):
    interface = SERVICE_IFACE

    def __init__(self, bus, state, collection):
        super().__init__(bus, SERVICE_PATH)
        self.bus, self.state, self.collection = bus, state, collection

    def properties(self):
        return {"Collections": dbus.Array([dbus.ObjectPath(COLLECTION_PATH)], signature="o")}

    def item(self, path):
        for i in self.collection.items:
            if i.path == path:
                return i
        raise no_such_object(path)

    @dbus.service.method(SERVICE_IFACE, in_signature="sv", out_signature="vo")
    def OpenSession(self, algorithm, payload):
        self.state.log("Service.OpenSession", algorithm)
        if algorithm != "plain":
            raise SecretError("org.freedesktop.DBus.Error.NotSupported", "only plain in the fake")
        path = "%s/session/%d" % (SERVICE_PATH, self.state.next_id())
        Session(self.bus, path)
        return dbus.String("", variant_level=1), dbus.ObjectPath(path)

    @dbus.service.method(SERVICE_IFACE, in_signature="a{ss}", out_signature="aoao")
    def SearchItems(self, attributes):
        self.state.log("Service.SearchItems", SERVICE_PATH)
        found = self.collection.matching(attributes)
        reply = (dbus.Array([dbus.ObjectPath(i.path) for i in found if not i.locked], signature="o"),
                 dbus.Array([dbus.ObjectPath(i.path) for i in found if i.locked], signature="o"))
        self.collection.vanish_after_search(bool(found))
        return reply

    @dbus.service.method(SERVICE_IFACE, in_signature="aoo", out_signature="a{o(oayays)}")
    def GetSecrets(self, items, session):
        self.state.log("Service.GetSecrets", SERVICE_PATH)
        result = dbus.Dictionary({}, signature="o(oayays)")
        if self.collection.vanish_before_secret():
            raise no_such_object(items[0] if items else SERVICE_PATH)
        for path in items:
            item = self.item(path)
            if not item.locked:
                result[dbus.ObjectPath(path)] = item.secret_struct(session)
        return result

    @dbus.service.method(SERVICE_IFACE, in_signature="s", out_signature="o")
    def ReadAlias(self, name):
        self.state.log("Service.ReadAlias", name)
        return dbus.ObjectPath(COLLECTION_PATH if name == "default" else "/")

    @dbus.service.method(SERVICE_IFACE, in_signature="so", out_signature="")
    def SetAlias(self, name, collection):
        raise SecretError("org.freedesktop.DBus.Error.NotSupported", "fixed aliases in the fake")

    @dbus.service.method(SERVICE_IFACE, in_signature="a{sv}s", out_signature="oo")
    def CreateCollection(self, properties, alias):
        raise SecretError("org.freedesktop.DBus.Error.NotSupported", "one collection in the fake")

    @dbus.service.method(SERVICE_IFACE, in_signature="ao", out_signature="aoo")
    def Unlock(self, objects):
        self.state.log("Service.Unlock", " ".join(objects))
        if not self.collection.locked:
            return dbus.Array(objects, signature="o"), dbus.ObjectPath("/")
        path = "%s/prompt/%d" % (SERVICE_PATH, self.state.next_id())
        Prompt(self.bus, path, self.state, "ao")
        return dbus.Array([], signature="o"), dbus.ObjectPath(path)

    @dbus.service.method(SERVICE_IFACE, in_signature="ao", out_signature="aoo")
    def Lock(self, objects):
        self.state.log("Service.Lock", " ".join(objects))
        self.collection.set_locked(True)
        return dbus.Array(objects, signature="o"), dbus.ObjectPath("/")


def swallow_method_calls(connection, message):
    """hang mode: claim every method call addressed to us and never answer it."""
    if isinstance(message, dbus.lowlevel.MethodCallMessage):
        return dbus.lowlevel.HANDLER_RESULT_HANDLED
    return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED


def load_seed(path):
    with open(path) as f:
        items = json.load(f)
    if not isinstance(items, list) or not all(isinstance(i, dict) and "attributes" in i and "secret" in i
                                              for i in items):
        raise SystemExit("fake_secret_service: --seed wants a JSON list of {attributes, secret, ...}")
    return items


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=["normal", "hang", "wrong-value", "duplicates"], default="normal")
    parser.add_argument("--seed")
    parser.add_argument("--locked", action="store_true")
    parser.add_argument("--log")
    parser.add_argument("--vanish", choices=["search", "secret", "create", "create-fails"])
    parser.add_argument("--keepassxc", action="store_true")
    parser.add_argument("--refuse-writes")
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    state = State(args.mode, args.log, args.vanish, args.keepassxc, args.refuse_writes)
    if args.mode == "hang":
        bus.add_message_filter(swallow_method_calls)
    else:
        seed = load_seed(args.seed) if args.seed else []
        if args.mode == "duplicates":
            keys = [json.dumps(i["attributes"], sort_keys=True) for i in seed]
            if len(set(keys)) == len(keys):
                raise SystemExit("fake_secret_service: --mode duplicates needs --seed with two items "
                                 "that have identical attributes")
        collection = Collection(bus, state, args.locked)
        for i in seed:
            collection.add(i.get("label", "seeded"), i["attributes"], i["secret"].encode(),
                           i.get("modified"), bool(i.get("locked", args.locked)))
        Service(bus, state, collection)
    name = dbus.service.BusName(BUS_NAME, bus, do_not_queue=True)
    print("ready", flush=True)
    try:
        GLib.MainLoop().run()
    except KeyboardInterrupt:
        pass
    del name


if __name__ == "__main__":
    main()
