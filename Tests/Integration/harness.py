"""Shared fixtures for the integration tests: built binaries, a private D-Bus session with a real
gnome-keyring, the identity provider emulator over HTTPS, and a private HOME/XDG tree per test.

Every test runs the real `tokenbroker` binaries as subprocesses with an environment built here,
so nothing touches the user's own keyring, config or runtime directory.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Emulator"))

import idp_emulator  # noqa: E402  (Tests/Emulator)
import keyring_providers  # noqa: E402

BIN_DIR = os.environ.get("TOKENBROKER_BIN_DIR") or os.path.join(ROOT, ".build", "debug")
TOKENBROKER = os.path.join(BIN_DIR, "tokenbroker")
SYSTEM_PYTHON = "/usr/bin/python3"
# The ExecCredential version kubectl's exec plugins speak today (v1beta1 is the older one).
KUBE_V1 = "client.authentication.k8s.io/v1"
CLIENT_ID = "11111111-2222-3333-4444-555555555555"

_cert_dir = None

# kwalletd refuses a session key shorter than 128 bytes, and libsecret sends one that short (its
# leading zero bytes dropped) once in 256 sessions: secret-tool then fails with this, and the same
# command with a new key succeeds.
SHORT_KEY = "Client public key size is invalid"

# A session bus whose only service directory is `service_dir`: nothing is activated unless a test
# puts a `.service` file there.
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


def cert_dir():
    """One CA and server certificate per test run, made with openssl (reused by every emulator)."""
    global _cert_dir
    if _cert_dir is None:
        _cert_dir = tempfile.mkdtemp(prefix="tb-certs-")
        idp_emulator.make_certs(_cert_dir)
    return _cert_dir


class Bus:
    """A private D-Bus session bus; optionally a gnome-keyring Secret Service on it."""

    def __init__(self, home, config_file=None):
        """`config_file`: a dbus-daemon configuration to use instead of the standard session one
        (e.g. one with a private `<servicedir>`)."""
        self.home = home
        self.procs = []
        # Services the bus activates inherit the daemon's environment: give it the private HOME,
        # so an activated gnome-keyring never opens the user's own keyrings.
        daemon_env = {k: v for k, v in os.environ.items()
                      if not k.startswith(("XDG_", "DBUS_", "GNOME_KEYRING"))}
        daemon_env["HOME"] = home
        bus_args = ["--config-file=" + config_file] if config_file else ["--session"]
        self.daemon = subprocess.Popen(
            ["dbus-daemon"] + bus_args + ["--nofork", "--print-address=1"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=daemon_env)
        self.address = self.daemon.stdout.readline().strip()
        self.procs.append(self.daemon)

    @classmethod
    def without_activation(cls, home, directory):
        """A bus on which no service can be activated: its configuration and empty service
        directory are made under `directory`."""
        service_dir = os.path.join(directory, "services")
        os.makedirs(service_dir, exist_ok=True)
        config = os.path.join(directory, "session.conf")
        with open(config, "w") as f:
            f.write(NO_ACTIVATION_BUS_CONFIG.format(service_dir=service_dir))
        return cls(home, config_file=config)

    def env(self):
        return {"DBUS_SESSION_BUS_ADDRESS": self.address, "HOME": self.home, "PATH": os.environ["PATH"]}

    def start_keyring(self, password="test"):
        """Starts gnome-keyring's Secret Service and unlocks (or creates) the login keyring."""
        p = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env())
        p.stdin.write(password.encode())
        p.stdin.close()
        self.procs.append(p)
        self.wait_for_name("org.freedesktop.secrets")
        return p

    def start_fake_secret_service(self, mode, seed=None, locked=False, log=None, vanish=None, keepassxc=False,
                                  refuse_writes=None):
        """The fake Secret Service (Tests/Integration/fake_secret_service.py) for failures a real
        gnome-keyring cannot show. `seed`: a JSON file of items; `locked`: the collection starts
        locked (prompts complete dismissed); `log`: a file that gets one line per method call;
        `vanish`: `search` or `secret`, every item goes after the first search that finds some;
        `create`, every item goes as the first CreateItem answers; `keepassxc`: UUID item paths and
        a replace answered with a prompt that never completes (KeePassXC 2.7.4); `refuse_writes`:
        a file, while which exists CreateItem fails."""
        args = [SYSTEM_PYTHON, os.path.join(HERE, "fake_secret_service.py"), "--mode", mode]
        if seed:
            args += ["--seed", seed]
        if locked:
            args += ["--locked"]
        if log:
            args += ["--log", log]
        if vanish:
            args += ["--vanish", vanish]
        if keepassxc:
            args += ["--keepassxc"]
        if refuse_writes:
            args += ["--refuse-writes", refuse_writes]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env(), text=True)
        self.procs.append(p)
        line = p.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError("fake secret service did not start: %r" % line)
        return p

    def call(self, *args):
        return subprocess.run(["gdbus", "call", "--session"] + list(args), env=self.env(),
                              capture_output=True, text=True, timeout=20)

    def wait_for_name(self, name, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = self.call("--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                          "--method", "org.freedesktop.DBus.NameHasOwner", name)
            if "true" in r.stdout:
                return
            time.sleep(0.05)
        raise RuntimeError("%s did not appear on the bus" % name)

    def lock_login_collection(self):
        r = self.call("--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
                      "--method", "org.freedesktop.Secret.Service.Lock",
                      "['/org/freedesktop/secrets/collection/login']")
        assert r.returncode == 0, r.stderr

    def collection_locked(self, collection="login"):
        """The `Locked` property of a collection (None when it cannot be read)."""
        r = self.call("--dest", "org.freedesktop.secrets",
                      "--object-path", "/org/freedesktop/secrets/collection/" + collection,
                      "--method", "org.freedesktop.DBus.Properties.Get",
                      "org.freedesktop.Secret.Collection", "Locked")
        if r.returncode != 0:
            return None
        return "true" in r.stdout

    def replace_keyring(self, password, timeout=20):
        """Replaces the running gnome-keyring on this bus and HOME with a new one that unlocks
        `login` with `password` (a wrong one leaves it locked on disk, as after a password
        change); returns once the new daemon owns the Secret Service name."""
        p = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--replace", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env())
        p.stdin.write(password.encode())
        p.stdin.close()
        self.procs.append(p)
        # Ask the Secret Service only once the new daemon owns the name: a call while the name
        # is between owners would D-Bus-activate another (locked) gnome-keyring.
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = self.call("--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                          "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID",
                          "org.freedesktop.secrets")
            if "(uint32 %d,)" % p.pid in r.stdout:
                return p
            time.sleep(0.05)
        raise RuntimeError("the new gnome-keyring did not take over the bus name")

    def unlock_login_collection(self, password="test", timeout=20):
        """Unlocks the login keyring without a prompt: a new gnome-keyring replaces the running
        one on this bus and HOME and unlocks `login` with `password` (the Secret Service's own
        Unlock needs a prompt, which cannot show without a display)."""
        p = self.replace_keyring(password, timeout)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.collection_locked() is False:
                return p
            time.sleep(0.05)
        raise RuntimeError("the login collection did not unlock")

    def secret_tool(self, *args, input=None):
        """secret-tool ARGS; made again when kwalletd refused its session key (SHORT_KEY)."""
        for _ in range(3):
            r = subprocess.run(["secret-tool"] + list(args), env=self.env(), input=input,
                               capture_output=True, text=True, timeout=20)
            if SHORT_KEY not in r.stderr:
                break
        return r

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            for stream in (p.stdout, p.stdin):
                if stream:
                    stream.close()


class BrokerTestCase(unittest.TestCase):
    """A private HOME, XDG tree, D-Bus session with an unlocked keyring, and an emulator. The
    keyring is gnome-keyring, or the Secret Service `provider` names (keyring_providers.py), whose
    object is `self.keyring_service`."""

    keyring = True
    provider = "gnome-keyring"
    emulator_options = {}
    # False: the test's session bus activates no service (a test starts each one it needs).
    activation = True

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tb-it-")
        self.home = os.path.join(self.tmp, "home")
        self.runtime = os.path.join(self.tmp, "run")
        os.makedirs(self.home)
        os.makedirs(self.runtime, mode=0o700)
        self.bus = Bus(self.home) if self.activation else Bus.without_activation(self.home, os.path.join(self.tmp, "dbus"))
        self.addCleanup(self._cleanup)
        self.keyring_service = None
        if self.keyring:
            self.keyring_service = keyring_providers.start(self.provider, self)
        self.emu = idp_emulator.Emulator(https=True, cert_dir=cert_dir(), **self.emulator_options)
        self.emu.start()
        self.ca_file = self.emu.ca_file
        self.write_config(self.default_config())

    def _cleanup(self):
        self.kill_agent()
        self.emu.stop()
        self.bus.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # --- the resident agent (most calls start one: `[broker] agent = auto` is the default)

    def agent_lock(self, socket=None):
        return (socket or os.path.join(self.runtime, "tokenbroker", "agent.sock")) + ".lock"

    def agent_pid(self, socket=None):
        """The pid of the agent serving `socket` (default: this test's), or None: the agent
        writes it into `<socket>.lock`; checked against /proc so a reused pid is never taken."""
        try:
            with open(self.agent_lock(socket)) as f:
                pid = int(f.read().strip())
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmdline = f.read().split(b"\0")
        except (OSError, ValueError):
            return None
        if any(a.endswith(b"tokenbroker-core") for a in cmdline[:1]) and b"agent" in cmdline:
            return pid
        return None

    def kill_agent(self, socket=None, sig=signal.SIGKILL, timeout=10):
        """Ends the agent of `socket` (default: this test's) if one runs, and waits for it."""
        pid = self.agent_pid(socket)
        if pid is None:
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.time() + timeout
        while time.time() < deadline and os.path.exists("/proc/%d" % pid):
            try:
                with open("/proc/%d/stat" % pid) as f:
                    if f.read().split(")")[-1].split()[0] == "Z":
                        break
            except OSError:
                break
            time.sleep(0.01)

    # --- configuration

    @property
    def config_path(self):
        return os.path.join(self.home, ".config", "tokenbroker", "config")

    def default_config(self, extra_broker="", extra_account=""):
        return f"""[broker]
ca-file = {self.ca_file}
refresh-margin = 300
login-timeout = 60
{extra_broker}
[account work]
provider = azure
tenant = contoso.example
client-id = {CLIENT_ID}
authority = {self.emu.base_url}
scopes = https://graph.microsoft.com/User.Read
hosts = git.example.test
{extra_account}
"""

    def write_config(self, text):
        os.makedirs(os.path.dirname(self.config_path), exist_ok=True)
        with open(self.config_path, "w") as f:
            f.write(text)

    def write_kubeconfig(self, server, user=None, api_version=KUBE_V1, ca=None):
        """Writes a kubeconfig of one cluster at `server` (trusting `ca` when given) and one user,
        and returns its path: tokenbroker as the user's exec plugin (`token get work --format
        exec-credential`, `exec.apiVersion` `api_version`), or `user`'s own indented lines (such as
        `    token: …`) when given."""
        cluster = '{server: "%s"%s}' % (server, ', certificate-authority: "%s"' % ca if ca else "")
        if user is None:
            user = (f"    exec:\n      apiVersion: {api_version or KUBE_V1}\n      command: {TOKENBROKER}\n"
                    "      args: [token, get, work, --format, exec-credential]\n"
                    "      interactiveMode: Never\n      provideClusterInfo: false")
        path = os.path.join(self.tmp, "kubeconfig")
        with open(path, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster: %s\ncontexts:\n"
                    "- name: test\n  context: {cluster: test, user: tb}\ncurrent-context: test\nusers:\n"
                    "- name: tb\n  user:\n%s\n" % (cluster, user))
        return path

    # --- a core without libcurl

    def env_without_libcurl(self):
        """The environment with a `libcurl.so.4` that is not libcurl (zlib, which has none of its
        functions) first on the library search path: the core loads libcurl at its first request."""
        fake = os.path.join(self.tmp, "not-libcurl")
        if not os.path.isdir(fake):
            zlib = (glob.glob("/usr/lib/*/libz.so.1") + glob.glob("/lib/*/libz.so.1"))[0]
            os.mkdir(fake)
            os.symlink(zlib, os.path.join(fake, "libcurl.so.4"))
        return self.env(LD_LIBRARY_PATH=fake)

    def assert_libcurl_missing(self, r):
        """Exit 4, nothing on stdout and exactly the loader's one line: the file (the link, or
        zlib's path when already loaded), the missing function and the package to install."""
        self.assertEqual((r.returncode, r.stdout), (4, b""), r.stderr)
        found = r"(%s|/\S*/libz\.so\.1)" % re.escape(os.path.join(self.tmp, "not-libcurl", "libcurl.so.4"))
        self.assertRegex(r.stderr.decode(), r"^tokenbroker: could not load libcurl \(libcurl\.so\.4 at %s has no "
                         r"function curl_global_init\); install libcurl4 \(Debian: apt-get install libcurl4\)\n$"
                         % found)

    # --- running the binaries

    def env(self, **overrides):
        env = self.bus.env()
        env.update({
            "XDG_RUNTIME_DIR": self.runtime,
            "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
            "XDG_DATA_HOME": os.path.join(self.home, ".local", "share"),
            "LANG": "C.UTF-8",
        })
        env.update(overrides)
        return {k: v for k, v in env.items() if v is not None}

    def run_broker(self, *args, input=b"", timeout=60, env=None, argv0=None):
        """Runs `tokenbroker ARGS` (or under the name argv0), returns CompletedProcess with
        bytes stdout/stderr; fails the test if it does not end within `timeout` seconds."""
        exe = TOKENBROKER
        if argv0:
            exe = os.path.join(self.tmp, argv0)
            if not os.path.exists(exe):
                os.symlink(TOKENBROKER, exe)
        if isinstance(input, str):
            input = input.encode()
        return subprocess.run([exe] + list(args), input=input, capture_output=True,
                              env=env or self.env(), timeout=timeout)

    def binaries_for(self, as_user):
        """The path of a `tokenbroker` that the command prefix `as_user` (e.g. setpriv to another
        uid) can run, with its `tokenbroker-core` beside it: copies in a fresh 0755 directory,
        since the build tree may sit where other users cannot enter (a 0700 or 0750 home).
        Skips the test, saying why, when even the copy cannot be run so (`version` fails)."""
        pub = tempfile.mkdtemp(prefix="tb-bin-")
        self.addCleanup(shutil.rmtree, pub, True)
        os.chmod(pub, 0o755)
        for name in ("tokenbroker", "tokenbroker-core"):
            shutil.copy(os.path.join(BIN_DIR, name), os.path.join(pub, name))
            os.chmod(os.path.join(pub, name), 0o755)
        front = os.path.join(pub, "tokenbroker")
        probe = subprocess.run(as_user + [front, "version"], capture_output=True, timeout=60,
                               stdin=subprocess.DEVNULL, env={"PATH": os.environ["PATH"], "HOME": "/nonexistent"})
        if probe.returncode != 0:
            self.skipTest("%s cannot run the copied binaries in %s (exit %d: %s); run this test where that user "
                          "can (the copies need /tmp to be executable for it)"
                          % (" ".join(as_user), pub, probe.returncode, probe.stderr.decode(errors="replace").strip()))
        return front

    def login(self, account="work", approve=True, **kw):
        """Runs a device-code login and approves it at the emulator while it polls."""
        p = subprocess.Popen([TOKENBROKER, "login", account, "--device-code"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=self.env())
        if approve:
            self.emu_approve_when_pending(**kw)
        out, err = p.communicate(timeout=60)
        return p.returncode, out, err

    def emu_approve_when_pending(self, timeout=30, **kw):
        """Approves the latest device code as soon as one has been requested."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                return self.emu.approve(**kw)
            except Exception:  # no device code requested yet
                time.sleep(0.05)
        raise AssertionError("no device code was requested")

    # --- keyring inspection

    def keyring_items(self, account=None):
        """(attributes, secret, label, schema) of every tokenbroker item, via secret-tool. secret-tool
        prints `xdg:schema` as `schema`, not among the attributes."""
        args = ["search", "--all", "application", "tokenbroker"]
        if account:
            args += ["account", account]
        # secret-tool prints label and secret on stdout but the attributes on stderr: read both
        # through one unbuffered pipe so each attribute stays with its item.
        # Asked again when kwalletd refused the session key, or listed an item without its secret
        # (it does so now and then right after a write).
        for _ in range(5):
            r = subprocess.run(["stdbuf", "-o0", "secret-tool"] + args, env=self.bus.env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
            lines = r.stdout.splitlines()
            if SHORT_KEY not in r.stdout and sum(x.startswith("secret = ") for x in lines) >= sum(
                    x.startswith("[") for x in lines):
                break
        items, current = [], None
        for line in r.stdout.splitlines():
            if line.startswith("["):
                current = {"attributes": {}}
                items.append(current)
            elif current is not None and " = " in line:
                k, v = line.split(" = ", 1)
                if k.startswith("attribute."):
                    current["attributes"][k[len("attribute."):]] = v
                elif k == "secret":
                    current["secret"] = v
                elif k in ("label", "schema"):
                    current[k] = v
        return items

    def put_back(self, item, secret):
        """Stores `secret` as `item` (from `keyring_items`) again with secret-tool, replacing it, as a
        stale copy would be: its attributes and its `xdg:schema`, which secret-tool lists apart.
        Without that attribute gnome-keyring may name the item `org.freedesktop.Secret.Generic`
        (it did each time the store came a second or more after tokenbroker's last write, as if it
        had re-read its file, which keeps no schema name), and such an item is not of tokenbroker's
        schema (interface.md §7): "not signed in"."""
        # KeePassXC lists an entry's fields among the attributes; they are not the item's own.
        own = {k: v for k, v in item["attributes"].items() if k not in keyring_providers.KeePassXC.ENTRY_FIELDS}
        attributes = sum(([k, v] for k, v in own.items()), [])
        # On KeePassXC deleted first (exit 1 when there was none), then stored: its 2.7.4 answers a
        # store that replaces an item with an access dialog (fixed in 2.7.6), and nobody answers it
        # here. Elsewhere a replace, which touches only the `default` collection's copy.
        if self.provider == "keepassxc":
            self.bus.secret_tool("clear", *attributes)
        r = self.bus.secret_tool("store", "--label", item.get("label", "tokenbroker"),
                                 "xdg:schema", item.get("schema", "org.tokenbroker.Secret"), *attributes, input=secret)
        self.assertEqual(r.returncode, 0, r.stderr)

    def assert_no_leak(self, *secrets, outputs=()):
        """No secret appears in the given outputs or in any keyring attribute or label."""
        blobs = [o.decode(errors="replace") if isinstance(o, bytes) else o for o in outputs]
        for item in self.keyring_items():
            blobs.append(json.dumps(item.get("attributes", {})))
            blobs.append(item.get("label", ""))
        for s in secrets:
            for b in blobs:
                self.assertNotIn(s, b)
