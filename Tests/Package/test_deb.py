"""The Debian package (scripts/deb, `make deb`) on this machine: installed with `apt-get install
./dist/tokenbroker_VERSION-1_ARCH.deb`, used by a new user account the way a person would
(`tokenbroker` from /usr/bin, `man`, bash/zsh/fish completion, `tokenbroker setup-git` and `git
credential fill` through /usr/bin/git-credential-tokenbroker against the HTTPS emulator with the
user's own D-Bus session and gnome-keyring, the systemd user units), then purged: none of the
package's files may be left, and the user account, its processes and the temporary files go too,
whether the checks passed or not.

It changes the machine, so it needs root, or sudo without a password (it skips, saying so,
without either), and it skips when tokenbroker is already installed here or when a file of the
package already exists (a `make install PREFIX=/usr`): it would replace and then delete them.
TOKENBROKER_DEB names the package file (default: the one make deb builds for this version).
"""
import glob
import os
import pwd
import secrets
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

CLIENT_ID = "11111111-2222-3333-4444-555555555555"
GIT_HOST = "git.example.test"
# The Swift runtime and toolchain libraries a dynamically linked Swift program would load.
SWIFT_LIBRARIES = ("libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime", "libicu")


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 300)
    return subprocess.run(args, **kw)


def package_path():
    if os.environ.get("TOKENBROKER_DEB"):
        return os.path.abspath(os.environ["TOKENBROKER_DEB"])
    version = run([os.path.join(ROOT, "scripts", "version")], check=True).stdout.strip()
    arch = run(["dpkg", "--print-architecture"], check=True).stdout.strip()
    return os.path.join(ROOT, "dist", "tokenbroker_%s-1_%s.deb" % (version, arch))


def privilege():
    """The command prefix that runs a command as root: none for root, `sudo -n` when it works."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and run(["sudo", "-n", "true"]).returncode == 0:
        return ["sudo", "-n"]
    return None


def package_state(name="tokenbroker"):
    r = run(["dpkg-query", "-W", "-f=${db:Status-Status}", name])
    return r.stdout.strip() if r.returncode == 0 else "not-installed"


def package_paths(deb):
    """The package's paths (`/usr/bin/tokenbroker`, ...) and which of them are directories."""
    listing = run(["dpkg-deb", "--fsys-tarfile", deb], capture_output=True, text=False, check=True).stdout
    names = run(["tar", "-tv"], input=listing, capture_output=True, text=False, check=True).stdout.decode()
    paths = {}
    for line in names.splitlines():
        fields = line.split(None, 5)
        path = fields[5].split(" -> ")[0]
        path = "/" + path.lstrip("./").rstrip("/")
        if path != "/":
            paths[path] = fields[0].startswith("d")
    return paths


class DebianPackageTest(unittest.TestCase):

    def setUp(self):
        for tool in ("apt-get", "dpkg-deb", "dpkg-query", "useradd", "userdel", "runuser"):
            if not shutil.which(tool):
                self.skipTest("%s is not on this machine (Debian's apt, dpkg, passwd and util-linux)" % tool)
        self.root = privilege()
        if self.root is None:
            self.skipTest("installing the package needs root or sudo without a password; run 'make deb-check' as root")
        self.deb = package_path()
        self.assertTrue(os.path.isfile(self.deb), "no package at %s; run 'make deb'" % self.deb)
        state = package_state()
        if state != "not-installed":
            self.skipTest("tokenbroker is %s on this machine (dpkg); the check would replace and purge it: "
                          "'apt-get purge tokenbroker' first, or run it elsewhere" % state)
        self.paths = package_paths(self.deb)
        taken = [p for p, is_dir in self.paths.items() if not is_dir and os.path.lexists(p)]
        if taken:
            self.skipTest("%s already exist(s) (make install PREFIX=/usr?); the check would overwrite and then "
                          "delete them: 'make uninstall PREFIX=/usr' first" % ", ".join(sorted(taken)))
        self.dirs_before = {p for p, is_dir in self.paths.items() if is_dir and os.path.isdir(p)}
        self.version = run(["dpkg-deb", "-f", self.deb, "Version"], check=True).stdout.strip()

        # A world-readable copy (apt reads local packages as _apt) and the user's runtime
        # directory and the emulator's CA, in a directory the new user can enter.
        self.tmp = tempfile.mkdtemp(prefix="tb-pkg-")
        self.addCleanup(self.sudo_rm, self.tmp)
        os.chmod(self.tmp, 0o755)
        self.local_deb = os.path.join(self.tmp, os.path.basename(self.deb))
        shutil.copy(self.deb, self.local_deb)
        os.chmod(self.local_deb, 0o644)

    # --- as root

    def as_root(self, *args, **kw):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        prefix = self.root + (["env", "DEBIAN_FRONTEND=noninteractive"] if self.root else [])
        return run(prefix + list(args), env=env, **kw)

    def sudo_rm(self, path):
        self.as_root("rm", "-rf", path)

    # --- as the new user

    def create_user(self):
        for _ in range(5):
            name = "tbpkg" + secrets.token_hex(3)
            try:
                pwd.getpwnam(name)
            except KeyError:
                break
        r = self.as_root("useradd", "--create-home", "--user-group", "--shell", "/bin/bash", name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.user = name
        self.addCleanup(self.remove_user)
        entry = pwd.getpwnam(name)
        self.uid, self.user_home = entry.pw_uid, entry.pw_dir
        # What pam_systemd makes at login: $XDG_RUNTIME_DIR, the user's own, 0700.
        self.runtime = os.path.join(self.tmp, "run")
        os.mkdir(self.runtime, 0o700)
        r = self.as_root("chown", "%s:%s" % (name, name), self.runtime)
        self.assertEqual(r.returncode, 0, r.stderr)

    def user_env(self):
        return ["env", "-i", "HOME=" + self.user_home, "USER=" + self.user, "LOGNAME=" + self.user,
                "SHELL=/bin/bash", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
                "XDG_RUNTIME_DIR=" + self.runtime]

    def as_user(self, *args, input=None, timeout=120):
        """Runs ARGS as the new user, with the environment a login gives (no DISPLAY)."""
        return run(self.root + ["runuser", "-u", self.user, "--"] + self.user_env() + list(args),
                   input=input, timeout=timeout, cwd="/")

    def user_shell(self, script, **kw):
        return self.as_user("bash", "-c", script, **kw)

    def user_processes(self):
        pids = []
        for status in glob.glob("/proc/[0-9]*/status"):
            try:
                with open(status) as f:
                    uid = next(line.split()[1] for line in f if line.startswith("Uid:"))
            except (OSError, StopIteration):
                continue
            if int(uid) == self.uid:
                pids.append(int(status.split("/")[2]))
        return pids

    def remove_user(self):
        """Ends what the test started as the user (the agent, gnome-keyring, dbus-daemon: all
        its processes, since the account is the test's own), then deletes the account and home."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.user_processes()
            if not pids:
                break
            self.as_root("kill", "-%d" % sig, *map(str, pids))
            deadline = time.time() + 5
            while time.time() < deadline and self.user_processes():
                time.sleep(0.1)
        self.as_root("userdel", "--remove", self.user)

    # --- the scenario

    def install(self):
        r = self.as_root("apt-get", "install", "-y", "-q", "--no-install-recommends", self.local_deb)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(package_state(), "installed")

    def purge(self):
        """apt-get purge; dpkg's own purge when apt's fails. Returns apt's result."""
        r = self.as_root("apt-get", "purge", "-y", "-q", "tokenbroker")
        if package_state() != "not-installed":
            self.as_root("dpkg", "--purge", "tokenbroker")
        return r

    def test_install_use_as_a_new_user_and_purge(self):
        try:
            self.install()
            self.create_user()
            self.check_depends()
            self.check_programs()
            self.check_manual()
            self.check_completions()
            self.check_git_credential_fill()
            self.check_systemd_units()
        finally:
            for pid in self.user_processes():
                self.as_root("kill", "-KILL", str(pid))
            r = self.purge()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.check_nothing_left()

    def check_depends(self):
        with self.subTest("Depends names libcurl (loaded at run time) and the linked libraries"):
            depends = run(["dpkg-query", "-W", "-f=${Depends}", "tokenbroker"], check=True).stdout
            for name in ("libcurl4 (>= ", "libsecret-1-0", "libsodium23", "libqrencode4", "libglib2.0-0"):
                self.assertIn(name, depends)

    def check_programs(self):
        upstream = self.version.rsplit("-", 1)[0]
        with self.subTest("tokenbroker version, from /usr/bin, prints the package's version"):
            r = self.user_shell("command -v tokenbroker git-credential-tokenbroker docker-credential-tokenbroker"
                                " && tokenbroker version")
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = r.stdout.splitlines()
            self.assertEqual(lines[:3], ["/usr/bin/tokenbroker", "/usr/bin/git-credential-tokenbroker",
                                         "/usr/bin/docker-credential-tokenbroker"])
            self.assertEqual(lines[3], "tokenbroker " + upstream)
            self.assertRegex(r.stdout, r"libcurl/\d")
            self.assertEqual(r.stderr, "")
        with self.subTest("ldd: no Swift library; the front is static"):
            core = self.as_user("ldd", "/usr/libexec/tokenbroker/tokenbroker-core")
            self.assertEqual(core.returncode, 0, core.stderr)
            self.assertNotIn("not found", core.stdout)
            for library in SWIFT_LIBRARIES:
                self.assertNotIn(library, core.stdout)
            front = self.as_user("ldd", "/usr/bin/tokenbroker")
            self.assertIn("not a dynamic executable", front.stdout + front.stderr)

    def check_manual(self):
        for page, heading in (("tokenbroker", "EXIT STATUS"), ("git-credential-tokenbroker", "EXIT STATUS"),
                              ("tokenbroker-config", "HOST RESOLUTION")):
            with self.subTest("man " + page):
                r = self.as_user("env", "MANPAGER=cat", "MANWIDTH=80", "man", page)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(heading, r.stdout)
                self.assertEqual(r.stderr, "")

    def check_completions(self):
        with self.subTest("bash completion, loaded on demand by bash-completion from the user's .bashrc"):
            # An interactive bash reads ~/.bashrc (Debian's /etc/skel one loads bash-completion);
            # the first completion of `tokenbroker` loads the package's file, as a TAB would.
            r = self.as_user("bash", "-i", "-c", "_completion_loader tokenbroker; complete -p tokenbroker;"
                             " COMP_WORDS=(tokenbroker lo); COMP_CWORD=1; COMP_LINE='tokenbroker lo';"
                             " COMP_POINT=${#COMP_LINE}; _tokenbroker tokenbroker lo tokenbroker;"
                             " printf '%s\\n' \"${COMPREPLY[@]}\"")
            self.assertIn("-F _tokenbroker tokenbroker", r.stdout, r.stderr)
            self.assertEqual(set(r.stdout.splitlines()[1:]), {"login", "logout", "lock"}, r.stderr)
        if shutil.which("zsh"):
            with self.subTest("zsh completion, on zsh's default fpath"):
                r = self.as_user("zsh", "-f", "-c", "autoload -Uz compinit && compinit -u -D && print -r -- $_comps[tokenbroker]")
                self.assertEqual(r.stdout.strip(), "_tokenbroker", r.stderr)
        if shutil.which("fish"):
            with self.subTest("fish completion, from fish's vendor directory"):
                r = self.as_user("fish", "-c", "complete -C 'tokenbroker lo'")
                offered = {line.split("\t")[0] for line in r.stdout.splitlines()}
                self.assertEqual(offered, {"login", "logout", "lock"}, r.stderr)

    def check_git_credential_fill(self):
        with self.subTest("git credential fill through /usr/bin/git-credential-tokenbroker"):
            certs = os.path.join(self.tmp, "certs")
            emu = idp_emulator.Emulator(https=True, cert_dir=certs, device_code_interval=1).start()
            try:
                os.chmod(certs, 0o755)
                os.chmod(emu.ca_file, 0o644)
                config = ("[broker]\nca-file = %s\n\n[account work]\nprovider = azure\ntenant = contoso.example\n"
                          "client-id = %s\nauthority = %s\nscopes = https://graph.microsoft.com/User.Read\n"
                          "hosts = %s\n" % (emu.ca_file, CLIENT_ID, emu.base_url, GIT_HOST))
                r = self.user_shell("mkdir -p ~/.config/tokenbroker && cat > ~/.config/tokenbroker/config",
                                    input=config)
                self.assertEqual(r.returncode, 0, r.stderr)
                # The user's own session bus and keyring; sign in with the device code (approved
                # below, at the emulator), let setup-git configure git, and ask git.
                script = (
                    "set -e\n"
                    "printf test | gnome-keyring-daemon --unlock --components=secrets >/dev/null\n"
                    "tokenbroker login work --device-code >/dev/null\n"
                    "tokenbroker setup-git >/dev/null\n"
                    "git config --global --get-all credential.https://%s.helper | sed 's/^/helper: /'\n"
                    "printf 'protocol=https\\nhost=%s\\n\\n' | git credential fill\n"
                    "tokenbroker agent stop >/dev/null || true\n" % (GIT_HOST, GIT_HOST))
                p = subprocess.Popen(self.root + ["runuser", "-u", self.user, "--"] + self.user_env() +
                                     ["dbus-run-session", "--", "bash", "-c", script],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
                try:
                    deadline = time.time() + 60
                    while p.poll() is None and time.time() < deadline:
                        try:
                            emu.approve()
                            break
                        except Exception:  # no device code requested yet
                            time.sleep(0.1)
                    out, err = p.communicate(timeout=120)
                finally:
                    if p.poll() is None:
                        p.kill()
                        p.communicate()
                self.assertEqual(p.returncode, 0, err)
                # setup-git names the package's helper by its path: git runs it without a second git.
                self.assertEqual([l for l in out.splitlines() if l.startswith("helper:")],
                                 ["helper: ", "helper: /usr/bin/git-credential-tokenbroker"], out)
                cred = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
                self.assertEqual(cred.get("username"), "user1@example.test", out)
                self.assertTrue(emu.validate_access_token(cred.get("password", "")), out)
            finally:
                emu.stop()

    def check_systemd_units(self):
        with self.subTest("systemd-analyze verify --user on the units"):
            if not shutil.which("systemd-analyze"):
                self.skipTest("systemd is not installed here (no systemd-analyze)")
            r = self.as_user("systemd-analyze", "--user", "verify", "/usr/lib/systemd/user/tokenbroker.socket",
                             "/usr/lib/systemd/user/tokenbroker.service")
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

    def check_nothing_left(self):
        self.assertEqual(package_state(), "not-installed")
        left = []
        # Directories that were there before (/usr/bin, /usr/share/man/man1) stay, of course.
        for path, is_dir in sorted(self.paths.items()):
            if os.path.lexists(path) and not (is_dir and path in self.dirs_before):
                left.append(path)
        self.assertEqual(left, [], "apt-get purge left these files of the package")
        self.assertEqual([pid for pid in glob.glob("/proc/[0-9]*/exe") if self.runs_package_program(pid)], [])

    @staticmethod
    def runs_package_program(exe):
        try:
            return os.readlink(exe).startswith(("/usr/libexec/tokenbroker/", "/usr/bin/tokenbroker"))
        except OSError:  # gone, or not ours to read
            return False
