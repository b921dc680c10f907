"""The Secret Service providers the store's integration tests run against, each started headless
on the test's private D-Bus session: gnome-keyring, KeePassXC (its Secret Service integration,
FdoSecrets) and KWallet (kwalletd5's Secret Service API). README "Keyrings" says what each needs
on a user's machine; this module sets up the same on a bus of the test's own.

KeePassXC and KWallet run on a bus that can activate nothing (`Bus.without_activation`), so no
gnome-keyring or other service can answer in their place; both are Qt programs and run on Qt's
`offscreen` platform, so no display (and no Xvfb) is needed: a dialog they open is shown to
nobody, as on a desktop where the user does not answer.

A test class chooses its provider with the class attribute `provider` (a name in `NAMES`);
`each_provider` makes a copy of a test class for each provider.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

NAMES = ("gnome-keyring", "keepassxc", "kwallet")
SECRETS = "org.freedesktop.secrets"
SERVICE_PATH = "/org/freedesktop/secrets"
PASSWORD = "test"


def each_provider(cls):
    """Class decorator: the class runs against gnome-keyring as it is, and a copy of it named
    `<Name>_keepassxc` / `<Name>_kwallet` runs the same tests against each other provider."""
    module = sys.modules[cls.__module__]
    for name in NAMES[1:]:
        copy = type("%s_%s" % (cls.__name__, name), (cls,), {"provider": name, "__doc__": cls.__doc__})
        copy.__module__ = cls.__module__
        setattr(module, copy.__name__, copy)
    return cls


def start(name, test):
    """Starts provider `name` for `test` (a BrokerTestCase: its `bus`, `home`, `tmp`) with an
    unlocked default collection; returns the provider object. KeePassXC and KWallet replace the
    test's bus with one that activates nothing first."""
    provider = {"gnome-keyring": GnomeKeyring, "keepassxc": KeePassXC, "kwallet": KWallet}[name](test)
    provider.start()
    return provider


def wait_until(condition, what, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise RuntimeError("%s did not happen within %d s" % (what, timeout))


class Provider:
    name = None

    def __init__(self, test):
        self.test = test
        self.collection = None  # the object path of the collection behind the `default` alias

    @property
    def bus(self):
        return self.test.bus

    def private_bus(self):
        """Replaces the test's bus with one on which nothing can be activated."""
        self.test.bus.close()
        self.test.bus = self.test.bus.without_activation(self.test.home, os.path.join(self.test.tmp, "dbus"))

    def read_alias(self):
        r = self.bus.call("--dest", SECRETS, "--object-path", SERVICE_PATH,
                          "--method", "org.freedesktop.Secret.Service.ReadAlias", "default")
        if r.returncode != 0:
            return None
        path = r.stdout.split("'")[1] if "'" in r.stdout else "/"
        return None if path == "/" else path

    def locked(self):
        """The `Locked` property of the default collection (None when it cannot be read)."""
        r = self.bus.call("--dest", SECRETS, "--object-path", self.collection,
                          "--method", "org.freedesktop.DBus.Properties.Get",
                          "org.freedesktop.Secret.Collection", "Locked")
        if r.returncode != 0:
            return None
        return "true" in r.stdout

    def unlock_by_prompt(self):
        """The Secret Service's own Unlock of the default collection, its prompt run (answered
        only where the provider needs no one to answer it)."""
        r = self.bus.call("--dest", SECRETS, "--object-path", SERVICE_PATH,
                          "--method", "org.freedesktop.Secret.Service.Unlock", "['%s']" % self.collection)
        assert r.returncode == 0, r.stderr
        prompt = r.stdout.rsplit("'", 2)[-2] if r.stdout.count("'") >= 2 else "/"
        if prompt not in ("/", self.collection):
            r = self.bus.call("--dest", SECRETS, "--object-path", prompt,
                              "--method", "org.freedesktop.Secret.Prompt.Prompt", "")
            assert r.returncode == 0, r.stderr

    def wait_locked(self, state):
        """Waits for the collection's `Locked` to be `state`; unlocked, also for no item of
        tokenbroker's to read locked (kwalletd unlocks the collection a moment before its items)."""
        wait_until(lambda: self.locked() is state, "%s's collection %s" % (self.name, "locking" if state else "unlocking"))
        if not state:
            wait_until(lambda: self.locked_items() == [], "%s's items unlocking" % self.name)

    def locked_items(self):
        """The object paths of tokenbroker's items that read locked (SearchItems, no prompt)."""
        r = self.bus.call("--dest", SECRETS, "--object-path", SERVICE_PATH,
                          "--method", "org.freedesktop.Secret.Service.SearchItems", "{'application': 'tokenbroker'}")
        if r.returncode != 0:
            return None
        # e.g. `([objectpath '/org/freedesktop/secrets/collection/kdewallet/1'], @ao [])`
        lists = re.findall(r"\[([^\]]*)\]", r.stdout)
        return re.findall(r"'(/[^']*)'", lists[1]) if len(lists) == 2 else None


class GnomeKeyring(Provider):
    """gnome-keyring-daemon --unlock --components=secrets on the test's session bus (the
    harness's own start: its `login` keyring, unlocked with the password on stdin)."""
    name = "gnome-keyring"

    def start(self):
        self.bus.start_keyring(PASSWORD)
        self.collection = SERVICE_PATH + "/collection/login"

    def lock(self):
        self.bus.lock_login_collection()

    def unlock(self):
        self.bus.unlock_login_collection(PASSWORD)


_templates = {}


def _template(name, make):
    """One file per test process made by `make(directory)` (a database, a wallet), copied for
    each test: making it costs a key derivation each time."""
    if name not in _templates:
        directory = tempfile.mkdtemp(prefix="tb-%s-" % name)
        _templates[name] = make(directory)
    return _templates[name]


class KeePassXC(Provider):
    """KeePassXC 2.7 with a database opened from the command line (`--pw-stdin`), its Secret
    Service integration on (keepassxc.ini `[FdoSecrets] Enabled=true`), the database's root group
    exposed (the database's custom data `FDO_SECRETS_EXPOSED_GROUP`, which only its Database
    Settings or an XML import set), and clients let in without a question: no confirmation when
    an item is read (`ConfirmAccessItem=false`) or deleted (`ConfirmDeleteItem=false`), no
    notification. `confirm_access`: leave KeePassXC's default of asking before each client reads
    an item."""
    name = "keepassxc"
    ROOT_GROUP = "0badc0de-0000-4000-8000-000000000001"
    ROOT_GROUP_B64 = "C63A3gAAQACAAAAAAAAAAQ=="  # the same UUID as KeePass XML writes it
    ENTRY_FIELDS = ("Title", "UserName", "URL", "Notes", "Uuid", "Path")
    WINDOW = ("--dest", "org.keepassxc.KeePassXC.MainWindow", "--object-path", "/keepassxc")

    def __init__(self, test, confirm_access=False):
        super().__init__(test)
        self.confirm_access = confirm_access

    @classmethod
    def make_database(cls, directory):
        xml = os.path.join(directory, "db.xml")
        with open(xml, "w") as f:
            f.write('<?xml version="1.0" encoding="UTF-8"?>\n<KeePassFile><Meta><DatabaseName>tokenbroker-test'
                    '</DatabaseName><CustomData><Item><Key>FDO_SECRETS_EXPOSED_GROUP</Key><Value>{%s}</Value>'
                    '</Item></CustomData></Meta><Root><Group><UUID>%s</UUID><Name>Passwords</Name></Group></Root>'
                    '</KeePassFile>\n' % (cls.ROOT_GROUP, cls.ROOT_GROUP_B64))
        path = os.path.join(directory, "tokenbroker-test.kdbx")
        # The smallest key derivation keepassxc-cli offers (100 ms), entered twice.
        r = subprocess.run(["keepassxc-cli", "import", "-q", "-p", "-t", "100", xml, path],
                           input="%s\n%s\n" % (PASSWORD, PASSWORD), capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("keepassxc-cli import failed: %s" % r.stderr)
        return path

    def start(self):
        self.private_bus()
        self.database = os.path.join(self.test.tmp, "tokenbroker-test.kdbx")
        shutil.copy(_template("keepassxc", self.make_database), self.database)
        self.run_program()

    def restart(self, confirm_access):
        """Ends KeePassXC and starts it again on the same database, asking before each client
        reads an item or not."""
        self.bus.call(*self.WINDOW, "--method", "org.keepassxc.KeePassXC.MainWindow.appExit")
        self.program.wait(60)
        wait_until(lambda: self.read_alias() is None, "KeePassXC leaving the bus")
        self.confirm_access = confirm_access
        self.run_program()

    def run_program(self):
        self.ini = os.path.join(self.test.tmp, "keepassxc.ini")
        with open(self.ini, "w") as f:
            f.write("[General]\nConfigVersion=2\nSingleInstance=false\nRememberLastDatabases=false\n"
                    "OpenPreviousDatabasesOnStartup=false\nAutoSaveAfterEveryChange=true\nBackupBeforeSave=false\n"
                    "[GUI]\nShowTrayIcon=false\nCheckForUpdates=false\n"
                    "[FdoSecrets]\nEnabled=true\nShowNotification=false\nConfirmAccessItem=%s\n"
                    "ConfirmDeleteItem=false\nUnlockBeforeSearch=false\n"
                    % ("true" if self.confirm_access else "false"))
        env = dict(self.bus.env(), QT_QPA_PLATFORM="offscreen", XDG_RUNTIME_DIR=self.test.runtime)
        p = subprocess.Popen(["keepassxc", "--pw-stdin", "--config", self.ini, self.database],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        p.stdin.write(PASSWORD.encode())
        p.stdin.close()
        self.bus.procs.append(p)
        self.program = p
        self.bus.wait_for_name(SECRETS, timeout=30)
        wait_until(lambda: self.read_alias() is not None, "KeePassXC's default collection")
        self.collection = self.read_alias()
        self.wait_locked(False)

    def lock(self):
        r = self.bus.call(*self.WINDOW, "--method", "org.keepassxc.KeePassXC.MainWindow.lockAllDatabases")
        assert r.returncode == 0, r.stderr
        self.wait_locked(True)

    def unlock(self):
        """Opens the locked database with its password through KeePassXC's own D-Bus interface
        (the Secret Service's Unlock would show its password dialog)."""
        r = self.bus.call(*self.WINDOW, "--method", "org.keepassxc.KeePassXC.MainWindow.openDatabase",
                          self.database, PASSWORD)
        assert r.returncode == 0, r.stderr
        self.wait_locked(False)


class KWallet(Provider):
    """kwalletd5 (KDE Frameworks 5) with its Secret Service API on (kwalletrc
    `[org.freedesktop.secrets] apiEnabled=true`), started as pam_kwallet5 starts it at a Plasma
    login: `--pam-login` with the password's hash on a pipe and the session's environment on a
    socket, which opens (and the first time creates) the wallet `kdewallet`. Such a wallet is
    open, yet its collection reads locked on the Secret Service until someone asks to unlock it,
    which kwalletd then grants without a dialog; `start` does that unless `as_after_login`.
    Without libqca-qt5-2-plugins kwalletd cannot make an encrypted session; `without_qca_plugins`
    starts it as on such a machine (QCA_NO_PLUGINS)."""
    name = "kwallet"
    WALLET = "kdewallet"
    # pam_kwallet5 derives 56 bytes from the login password (PBKDF2-SHA512 with the wallet's salt);
    # any 56 bytes open a wallet that was created with them.
    HASH = bytes(range(56))
    KWALLETD = ("--dest", "org.kde.kwalletd5", "--object-path", "/modules/kwalletd5")

    def __init__(self, test, as_after_login=False, without_qca_plugins=False):
        super().__init__(test)
        self.as_after_login = as_after_login
        self.without_qca_plugins = without_qca_plugins

    def wallet_dir(self, home):
        return os.path.join(home, ".local", "share", "kwalletd")

    def write_kwalletrc(self, home):
        config = os.path.join(home, ".config")
        os.makedirs(config, exist_ok=True)
        with open(os.path.join(config, "kwalletrc"), "w") as f:
            f.write("[Wallet]\nEnabled=true\nFirst Use=false\nClose When Idle=false\nUse One Wallet=true\n\n"
                    "[org.freedesktop.secrets]\napiEnabled=true\n")

    def launch(self, bus, home, runtime, extra_env=None):
        """kwalletd5 --pam-login on `bus`, as pam_kwallet5 runs it; returns the process."""
        env = {"HOME": home, "PATH": os.environ["PATH"], "XDG_RUNTIME_DIR": runtime,
               "QT_QPA_PLATFORM": "offscreen", "PAM_KWALLET5_LOGIN": "1"}
        env.update(extra_env or {})
        if os.path.exists(os.path.join(runtime, "kwallet5.socket")):
            os.unlink(os.path.join(runtime, "kwallet5.socket"))
        hash_read, hash_write = os.pipe()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path = os.path.join(runtime, "kwallet5.socket")
        listener.bind(path)
        listener.listen(1)
        try:
            p = subprocess.Popen(["kwalletd5", "--pam-login", str(hash_read), str(listener.fileno())],
                                 pass_fds=(hash_read, listener.fileno()), env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            os.close(hash_read)
            listener.close()
        bus.procs.append(p)
        os.write(hash_write, self.HASH)
        os.close(hash_write)
        # The session's environment, as pam_kwallet_init sends it once the session has started.
        lines = dict(env, DBUS_SESSION_BUS_ADDRESS=bus.address)
        lines.pop("PAM_KWALLET5_LOGIN")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            s.sendall("".join("%s=%s\n" % kv for kv in lines.items()).encode())
        os.unlink(path)
        return p

    def make_wallet(self, directory):
        """A wallet made by kwalletd5's first PAM start (it creates `kdewallet`, but offers it on
        the Secret Service only from its next start)."""
        from harness import Bus
        home = os.path.join(directory, "home")
        runtime = os.path.join(directory, "run")
        os.makedirs(runtime, mode=0o700)
        self.write_kwalletrc(home)
        bus = Bus.without_activation(home, os.path.join(directory, "dbus"))
        try:
            self.launch(bus, home, runtime)
            wallet = os.path.join(self.wallet_dir(home), self.WALLET + ".kwl")
            wait_until(lambda: os.path.exists(wallet), "kwalletd5 creating the wallet")
            bus.wait_for_name(SECRETS)
        finally:
            bus.close()
        return self.wallet_dir(home)

    def start(self):
        self.private_bus()
        shutil.copytree(_template("kwallet", self.make_wallet), self.wallet_dir(self.test.home))
        self.write_kwalletrc(self.test.home)
        self.run_daemon()

    def log_in_again(self):
        """Ends kwalletd5 and starts it as the next Plasma login does (`as_after_login`: its
        wallet open, its collection reading locked). The wallet is closed first, which writes it
        to disk: kwalletd writes a change only some seconds later, and what it has not written
        when it ends is lost (the items' attributes, kept in a file of their own, stay)."""
        self.lock()
        self.daemon.terminate()
        self.daemon.wait(10)
        wait_until(lambda: self.read_alias() is None, "kwalletd5 leaving the bus")
        self.as_after_login = True
        self.run_daemon()

    def run_daemon(self):
        self.daemon = self.launch(self.bus, self.test.home, self.test.runtime,
                                  {"QCA_NO_PLUGINS": "1"} if self.without_qca_plugins else None)
        self.bus.wait_for_name(SECRETS, timeout=30)
        wait_until(lambda: self.read_alias() is not None, "KWallet's default collection")
        self.collection = self.read_alias()
        if not self.as_after_login:
            # Asked before kwalletd has opened the wallet with the login's hash, it shows its
            # password dialog instead (to nobody: the collection stayed locked, 1 start in 10
            # under load).
            wait_until(self.is_open, "kwalletd opening the wallet at login", timeout=30)
            self.unlock_by_prompt()
            self.wait_locked(False)

    def is_open(self):
        r = self.bus.call(*self.KWALLETD, "--method", "org.kde.KWallet.isOpen", self.WALLET)
        return "true" in r.stdout

    def lock(self):
        """Closes the wallet through kwalletd's own interface (force: whoever uses it)."""
        r = self.bus.call(*self.KWALLETD, "--method", "org.kde.KWallet.close", self.WALLET, "true")
        assert r.returncode == 0, r.stderr
        self.wait_locked(True)

    def unlock(self):
        """Opens the wallet with the password's hash as pam_kwallet5 does (kwalletd's pamOpen; its
        own open would show the password dialog), then unlocks its collection, which kwalletd
        grants an open wallet without a dialog."""
        array = "[%s]" % ", ".join("byte 0x%02x" % b for b in self.HASH)
        r = self.bus.call(*self.KWALLETD, "--method", "org.kde.KWallet.pamOpen", self.WALLET, array, "0")
        assert r.returncode == 0, r.stderr
        wait_until(self.is_open, "kwalletd opening the wallet")
        self.unlock_by_prompt()
        self.wait_locked(False)
