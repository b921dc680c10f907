"""Scheduled jobs (interface.md §2, the runtime directory): Debian's cron does not run pam_systemd,
so a job has neither `XDG_RUNTIME_DIR` nor `DBUS_SESSION_BUS_ADDRESS`, while the user's session
has its agent in `/run/user/$UID/tokenbroker` and its session bus at `/run/user/$UID/bus`.

Real parts, as a second local user (so `/run/user/$UID` can be made for it as logind would, 0700
and the user's, without touching the machine's own users): dbus-daemon listening at
`/run/user/$UID/bus`, gnome-keyring on it, the emulator, and the job's environment as cron gives
it (HOME, LOGNAME, SHELL, PATH)."""
import os
import pwd
import shutil
import signal
import subprocess
import time
import unittest
import uuid

from harness import BrokerTestCase

needs_root = unittest.skipUnless(os.geteuid() == 0, "needs root (a second local user and its /run/user directory)")


@needs_root
@unittest.skipUnless(shutil.which("setpriv"), "needs setpriv (util-linux)")
class CronJobTest(BrokerTestCase):
    keyring = False  # the user's own keyring is started as that user below
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.user = "tbcron" + uuid.uuid4().hex[:8]
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", self.user], check=True, capture_output=True)
        self.addCleanup(subprocess.run, ["userdel", "--remove", "--force", self.user], capture_output=True)
        entry = pwd.getpwnam(self.user)
        self.uid, self.user_home = entry.pw_uid, entry.pw_dir
        self.as_user = ["setpriv", "--reuid=%d" % entry.pw_uid, "--regid=%d" % entry.pw_gid, "--clear-groups"]
        self.addCleanup(self.end_user_processes)
        # What logind makes at login: /run/user/UID, the user's, 0700.
        os.makedirs("/run/user", mode=0o755, exist_ok=True)
        self.session_dir = "/run/user/%d" % self.uid
        os.mkdir(self.session_dir, 0o700)
        os.chown(self.session_dir, entry.pw_uid, entry.pw_gid)
        self.addCleanup(shutil.rmtree, self.session_dir, True)
        self.fallback_dir = "/tmp/tokenbroker-%d" % self.uid
        self.addCleanup(shutil.rmtree, self.fallback_dir, True)
        self.bus_address = "unix:path=%s/bus" % self.session_dir
        self.front = self.binaries_for(self.as_user)
        self.path = os.path.dirname(self.front) + ":/usr/bin:/bin"
        ca = os.path.join(self.user_home, "ca.pem")
        shutil.copy(self.ca_file, ca)
        config = os.path.join(self.user_home, ".config", "tokenbroker", "config")
        os.makedirs(os.path.dirname(config))
        with open(config, "w") as f:
            f.write(self.default_config().replace(self.ca_file, ca))
        subprocess.run(["chown", "-R", "%d:%d" % (entry.pw_uid, entry.pw_gid), self.user_home], check=True)
        self.start_session_bus_and_keyring()

    def session_env(self):
        """The environment of the user's desktop or login session (pam_systemd's variables)."""
        return {"HOME": self.user_home, "PATH": self.path, "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": self.session_dir,
                "DBUS_SESSION_BUS_ADDRESS": self.bus_address}

    def cron_env(self):
        """The environment Debian's cron gives a job: no XDG_RUNTIME_DIR, no session bus."""
        return {"HOME": self.user_home, "PATH": self.path, "LOGNAME": self.user, "SHELL": "/bin/sh"}

    def start_session_bus_and_keyring(self):
        env = {"HOME": self.user_home, "PATH": os.environ["PATH"]}
        self.daemon = subprocess.Popen(
            self.as_user + ["dbus-daemon", "--session", "--nofork", "--address=" + self.bus_address, "--print-address=1"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.assertTrue(self.daemon.stdout.readline().strip().startswith(self.bus_address))
        env["DBUS_SESSION_BUS_ADDRESS"] = self.bus_address
        keyring = subprocess.Popen(self.as_user + ["gnome-keyring-daemon", "--foreground", "--unlock",
                                                   "--components=secrets"],
                                   stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        keyring.stdin.write(b"test")
        keyring.stdin.close()
        self.keyring_daemon = keyring
        deadline = time.time() + 20
        while time.time() < deadline:
            r = subprocess.run(self.as_user + ["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                                               "--object-path", "/org/freedesktop/DBus", "--method",
                                               "org.freedesktop.DBus.NameHasOwner", "org.freedesktop.secrets"],
                               capture_output=True, text=True, env=env, timeout=20)
            if "true" in r.stdout:
                return
            time.sleep(0.05)
        self.fail("gnome-keyring did not appear on the user's bus")

    def end_user_processes(self):
        """Ends every process of the test's user (its bus, keyring and agents), by pid."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.user_pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.time() + 5
            while time.time() < deadline and self.user_pids():
                time.sleep(0.05)
        for p in (getattr(self, "daemon", None), getattr(self, "keyring_daemon", None)):
            if p is not None:
                p.wait(5)
                for stream in (p.stdout, p.stdin):
                    if stream:
                        stream.close()

    def user_pids(self):
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open("/proc/%s/status" % entry) as f:
                        status = f.read()
                    uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
                    state = next(line for line in status.splitlines() if line.startswith("State:"))
                    if int(uid_line.split()[1]) == self.uid and "Z" not in state.split()[1]:
                        found.append(int(entry))
                except (OSError, StopIteration, ValueError):
                    pass
        return found

    def agent_pids(self):
        """Pids of the user's `tokenbroker-core agent run` processes."""
        found = []
        for pid in self.user_pids():
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv[0].endswith(b"tokenbroker-core") and b"agent" in argv:
                found.append(pid)
        return sorted(found)

    def broker(self, *args, env):
        return subprocess.run(self.as_user + [self.front] + list(args), capture_output=True, env=env, timeout=60,
                              stdin=subprocess.DEVNULL)

    def sign_in(self):
        p = subprocess.Popen(self.as_user + [self.front, "login", "work", "--device-code"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=self.session_env(), stdin=subprocess.DEVNULL)
        self.emu_approve_when_pending()
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)

    def test_Y16_a_cron_job_is_served_by_the_agent_of_the_users_session(self):
        """The user's agent runs (started from the session); a job with cron's environment gets
        a valid token from it, and no second agent appears, in /tmp or anywhere."""
        self.sign_in()
        r = self.broker("token", "get", "work", env=self.session_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        agents = self.agent_pids()
        self.assertEqual(len(agents), 1, agents)
        self.assertTrue(os.path.exists(os.path.join(self.session_dir, "tokenbroker", "agent.sock")))
        r = self.broker("token", "get", "work", env=self.cron_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
        self.assertEqual(self.agent_pids(), agents)
        self.assertFalse(os.path.exists(self.fallback_dir), "a second runtime directory in /tmp")

    def test_Y16_a_cron_job_without_an_agent_reaches_the_users_keyring(self):
        """No agent runs: the job's call starts one in /run/user/$UID/tokenbroker, which reaches
        the user's keyring on the session bus at /run/user/$UID/bus; so does the full program
        (`status`, which the agent does not run)."""
        self.sign_in()
        self.assertEqual(self.agent_pids(), [])
        r = self.broker("token", "get", "work", env=self.cron_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
        self.assertTrue(os.path.exists(os.path.join(self.session_dir, "tokenbroker", "agent.sock")))
        self.assertFalse(os.path.exists(self.fallback_dir), "a second runtime directory in /tmp")
        for pid in self.agent_pids():
            os.kill(pid, signal.SIGKILL)
        r = self.broker("status", env=self.cron_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"work", r.stdout)
