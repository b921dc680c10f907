"""The agent forwarded to an SSH host and into a user namespace (interface.md §8 "Forwarding",
bug-cases-3.md X18, X19), with real parts: Debian's sshd on 127.0.0.1 (its own host key and config
in the test's directory) and a second local user as the remote account with its own HOME; `ssh -R`
with the option `tokenbroker forward` prints; on the far side real git through
git-credential-tokenbroker. And `unshare` user namespaces with the socket bind-mounted.

What the agent sees over `ssh -R`: the far side's process connects to sshd's socket (owned by the
remote user); sshd hands the connection to the ssh client on the agent's machine, which connects to
forward.sock as the agent's own user. So the agent's peer check passes for every remote uid; the far
end's socket is protected by sshd (0600, the remote user's), and what the agent answers there is
limited by the forwarding rules, not by the uid. The user-namespace tests are where the peer check
itself decides."""
import os
import pwd
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import uuid

from agent_flows import CORE, AgentTestCase
from harness import CLIENT_ID, TOKENBROKER
from test_git_clone import GitServerTestCase

needs_root = unittest.skipUnless(os.geteuid() == 0, "needs root (a second local user for the SSH account, setpriv)")


def forward_lines(test):
    """`tokenbroker forward`'s three lines: socket, ssh option, RemoteForward line."""
    r = test.run_broker("forward")
    test.assertEqual(r.returncode, 0, r.stderr)
    lines = r.stdout.decode().splitlines()
    test.assertEqual(len(lines), 3, lines)
    return lines


class ForwardTestCase(GitServerTestCase):
    """A git server, the agent's config with `work` (forward = yes) and `other` (not forwarded),
    both signed in on the agent's side."""

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config(extra_account="forward = yes") + f"""
[host {self.host}]
account = work

[account other]
provider = azure
tenant = contoso.example
client-id = {CLIENT_ID}
authority = {self.emu.base_url}
hosts = other.example.test
""")
        for account in ("work", "other"):
            rc, _, err = self.login(account)
            self.assertEqual(rc, 0, err)

    def agents_of_test(self):
        """The agents whose XDG_RUNTIME_DIR is this test's (their environ is readable as root)."""
        marker = ("XDG_RUNTIME_DIR=" + self.runtime).encode() + b"\0"
        return sorted(pid for pid, environ in AgentTestCase._agent_processes().items()
                      if environ is not None and marker in environ)

    def public_copy(self, path):
        """`path` copied into a 0755 directory of its own, readable by every user."""
        pub = tempfile.mkdtemp(prefix="tb-pub-")
        self.addCleanup(shutil.rmtree, pub, True)
        os.chmod(pub, 0o755)
        dest = os.path.join(pub, os.path.basename(path))
        shutil.copy(path, dest)
        os.chmod(dest, 0o644)
        return dest

    def refresh_tokens(self):
        return [t["token"] for t in self.emu.state()["refresh_tokens"]]

    def assert_no_refresh_token_under(self, *roots):
        """No file under `roots` holds any refresh token the emulator ever issued."""
        tokens = [t.encode() for t in self.refresh_tokens()]
        self.assertTrue(tokens)
        for root in roots:
            for directory, _, files in os.walk(root):
                for name in files:
                    path = os.path.join(directory, name)
                    try:
                        with open(path, "rb") as f:
                            data = f.read()
                    except OSError:
                        continue
                    for t in tokens:
                        self.assertNotIn(t, data, "a refresh token in " + path)


@needs_root
@unittest.skipUnless(shutil.which("sshd") or os.path.exists("/usr/sbin/sshd"), "openssh-server is not installed (make deps)")
@unittest.skipUnless(shutil.which("ssh"), "openssh-client is not installed (make deps)")
class ForwardOverSSHTest(ForwardTestCase):
    """`ssh -R` to a real sshd on 127.0.0.1 as a second local user."""

    def setUp(self):
        super().setUp()
        self.user = "tbfw" + uuid.uuid4().hex[:8]
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", self.user], check=True, capture_output=True)
        self.addCleanup(subprocess.run, ["userdel", "--remove", "--force", self.user], capture_output=True)
        subprocess.run(["usermod", "-p", "*", self.user], check=True)  # not locked: sshd without PAM refuses "!"
        entry = pwd.getpwnam(self.user)
        self.remote_uid, self.remote_home = entry.pw_uid, entry.pw_dir
        self.remote_runtime = tempfile.mkdtemp(prefix="tb-remote-run-")
        os.chown(self.remote_runtime, entry.pw_uid, entry.pw_gid)
        self.addCleanup(shutil.rmtree, self.remote_runtime, True)
        self.front = self.binaries_for(["setpriv", "--reuid=%d" % entry.pw_uid, "--regid=%d" % entry.pw_gid, "--clear-groups"])
        os.symlink("tokenbroker", os.path.join(os.path.dirname(self.front), "git-credential-tokenbroker"))
        self.remote_ca = self.public_copy(self.ca_file)
        self.start_sshd(entry)
        self.local, self.option, self.remote_forward = forward_lines(self)
        self.remote_socket = "/tmp/tokenbroker-%s-forward.sock" % self.user
        self.addCleanup(lambda: os.path.exists(self.remote_socket) and os.unlink(self.remote_socket))
        self.tunnel = self.open_tunnel()

    def start_sshd(self, entry):
        # Outside the test's 0700 directory: sshd reads authorized_keys as the remote user.
        d = tempfile.mkdtemp(prefix="tb-sshd-")
        self.addCleanup(shutil.rmtree, d, True)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, "host_key")], check=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, "client_key")], check=True)
        keys = os.path.join(d, "authorized_keys")
        shutil.copy(os.path.join(d, "client_key.pub"), keys)
        os.chmod(keys, 0o644)
        os.chmod(d, 0o755)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.ssh_port = s.getsockname()[1]
        config = os.path.join(d, "sshd_config")
        with open(config, "w") as f:
            f.write(f"""Port {self.ssh_port}
ListenAddress 127.0.0.1
HostKey {d}/host_key
PidFile {d}/sshd.pid
AuthorizedKeysFile {keys}
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
AllowUsers {entry.pw_name}
AllowStreamLocalForwarding yes
StreamLocalBindUnlink yes
PrintMotd no
LogLevel ERROR
""")
        self.sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", config], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.addCleanup(self.sshd.wait, 10)
        self.addCleanup(self.sshd.terminate)
        with open(os.path.join(d, "host_key.pub")) as f:
            host_key = " ".join(f.read().split()[:2])
        self.known_hosts = os.path.join(d, "known_hosts")
        with open(self.known_hosts, "w") as f:
            f.write("[127.0.0.1]:%d %s\n" % (self.ssh_port, host_key))
        self.ssh_base = ["ssh", "-F", "/dev/null", "-i", os.path.join(d, "client_key"), "-p", str(self.ssh_port),
                         "-o", "UserKnownHostsFile=" + self.known_hosts, "-o", "StrictHostKeyChecking=yes",
                         "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR"]
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.far("true").returncode == 0:
                return
            time.sleep(0.2)
        self.fail("sshd did not accept a login: " + self.far("true").stderr.decode(errors="replace"))

    def open_tunnel(self):
        """`ssh -N` with the `-R` option `tokenbroker forward` printed (the ssh client runs as the
        agent's user, here, and expands `%r`), kept open until the test kills it."""
        tunnel = subprocess.Popen(
            self.ssh_base + ["-N", "-o", "ExitOnForwardFailure=yes"] + shlex.split(self.option) + [self.user + "@127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env())
        self.addCleanup(lambda: tunnel.poll() is not None or (tunnel.kill(), tunnel.wait()))
        deadline = time.time() + 20
        while time.time() < deadline and not os.path.exists(self.remote_socket):
            self.assertIsNone(tunnel.poll(), tunnel.stderr.read() if tunnel.poll() is not None else "")
            time.sleep(0.05)
        self.assertTrue(os.path.exists(self.remote_socket), "ssh -R made no socket at " + self.remote_socket)
        return tunnel

    def far(self, command, **env):
        """Runs the shell `command` as the remote user through sshd, with a far-side environment:
        its own HOME and XDG_RUNTIME_DIR, tokenbroker and git-credential-tokenbroker on PATH, the
        forwarded socket in TOKENBROKER_AGENT_SOCKET (unless `env` says otherwise)."""
        values = {"HOME": getattr(self, "remote_home", "/"), "XDG_RUNTIME_DIR": getattr(self, "remote_runtime", "/tmp"),
                  "PATH": os.path.dirname(getattr(self, "front", TOKENBROKER)) + ":/usr/bin:/bin",
                  "TOKENBROKER_AGENT_SOCKET": getattr(self, "remote_socket", ""),
                  "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
        values.update(env)
        line = "env " + " ".join(shlex.quote("%s=%s" % kv) for kv in values.items() if kv[1] is not None) + " " + command
        return subprocess.run(self.ssh_base + [self.user + "@127.0.0.1", line], capture_output=True, timeout=120,
                              stdin=subprocess.DEVNULL)

    def remote_agents(self):
        """Pids of tokenbroker-core processes of the remote user."""
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open("/proc/%s/cmdline" % entry, "rb") as f:
                        argv = f.read().split(b"\0")
                    if argv[0].endswith(b"tokenbroker-core") and os.stat("/proc/" + entry).st_uid == self.remote_uid:
                        found.append(int(entry))
                except OSError:
                    pass
        return found

    def test_far_side_is_served_for_forwarded_accounts_only(self):
        self.assertTrue(self.local.endswith("/tokenbroker/forward.sock"))
        self.assertEqual(self.option, "-R /tmp/tokenbroker-%r-forward.sock:" + self.local)
        self.assertEqual(self.remote_forward, "RemoteForward /tmp/tokenbroker-%r-forward.sock " + self.local)
        self.assertEqual(os.stat(self.local).st_mode & 0o777, 0o600)
        [agent] = self.agents_of_test()

        token = self.far("tokenbroker token get work")
        self.assertEqual(token.returncode, 0, token.stderr)
        self.assertTrue(self.emu.validate_access_token(token.stdout.decode().strip()))
        kube = self.far("tokenbroker token get work --format exec-credential")
        self.assertEqual(kube.returncode, 0, kube.stderr)
        self.assertIn(b'"kind":"ExecCredential"', kube.stdout.replace(b" ", b""))

        other = self.far("tokenbroker token get other")
        self.assertEqual((other.returncode, other.stdout), (3, b""), other.stderr)
        self.assertEqual(other.stderr.count(b"\n"), 1, other.stderr)
        self.assertIn(b"does not forward the tokens of 'other'", other.stderr)

        for command in ("tokenbroker login work --device-code", "tokenbroker logout work", "tokenbroker unlock",
                        "tokenbroker agent start", "tokenbroker account remove work"):
            r = self.far(command)
            self.assertEqual((r.returncode, r.stdout), (64, b""), command)
            self.assertEqual(r.stderr.count(b"\n"), 1, r.stderr)
            self.assertIn(b"cannot be done over a forwarded agent", r.stderr)

        # Real git on the far side, through git-credential-tokenbroker and the forwarded agent.
        dest = os.path.join(self.remote_home, "clone")
        clone = self.far("git -c credential.helper= -c credential.helper=tokenbroker clone -q %s %s"
                         % (shlex.quote(self.url), shlex.quote(dest)), GIT_SSL_CAINFO=self.remote_ca)
        self.assertEqual(clone.returncode, 0, clone.stderr)
        with open(os.path.join(dest, "README")) as f:
            self.assertEqual(f.read(), "hello from the test server\n")
        self.assertIn("Basic", self.server.seen)

        self.assertEqual(self.agents_of_test(), [agent], "one agent, the local one")
        self.assertEqual(self.remote_agents(), [], "no agent started on the far side")
        self.assertEqual(self.local_refresh_tokens_kept(), True)
        self.assert_no_refresh_token_under(self.remote_home, self.remote_runtime)

        # The ssh connection dies: the far side's next call is exit 4 within 2 s, naming the socket.
        self.tunnel.kill()
        self.tunnel.wait()
        timed = self.far("sh -c 'a=$(date +%s%N); tokenbroker token get work; echo rc=$?; b=$(date +%s%N); "
                         "echo ms=$(( (b - a) / 1000000 ))'")
        out = timed.stdout.decode()
        self.assertIn("rc=4", out, timed.stderr)
        self.assertLess(int(out.split("ms=")[1].split()[0]), 2000, out)
        self.assertEqual(timed.stderr.count(b"\n"), 1, timed.stderr)
        self.assertIn(("the forwarded agent at " + self.remote_socket).encode(), timed.stderr)
        self.assertEqual(self.remote_agents(), [], "no agent started over the dead forward")
        self.assert_no_refresh_token_under(self.remote_home, self.remote_runtime)

    def test_Y14_after_forward_the_agent_outlives_its_idle_timeout(self):
        """Without the systemd units the agent exits after `agent-idle-timeout` without requests,
        and the far side cannot start it. An agent for which `tokenbroker forward` was run stays
        past its idle timeout: proved against a control agent with the same timeout, started later
        and without a forward, which does exit; the far side's calls keep working; `agent stop`
        ends the keep.

        `forward` starts the agent itself and waits for it. A local `token get` is not used to
        start it: under load (four test files at once on 2 cores) an agent can take longer than
        the front's start bound, the front then serves the call without it, and the agent, with
        a 2 s idle timeout, may come and go before the test looks (CI of f320c9d)."""
        self.kill_agent()
        with open(self.config_path) as f:
            config = f.read()
        self.write_config(config.replace("[broker]\n", "[broker]\nagent-idle-timeout = 2\n", 1))
        forward_lines(self)
        agent = self.agent_pid()
        self.assertIsNotNone(agent, "forward left no agent running")
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)
        self.assertEqual(self.agent_pid(), agent)
        first = self.far("tokenbroker token get work")
        self.assertEqual(first.returncode, 0, first.stderr)
        control_runtime = os.path.join(self.tmp, "control-run")
        os.makedirs(control_runtime, mode=0o700)
        control_socket = os.path.join(control_runtime, "tokenbroker", "agent.sock")
        r = self.run_broker("agent", "start", env=self.env(XDG_RUNTIME_DIR=control_runtime))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.addCleanup(self.kill_agent, control_socket)
        deadline = time.time() + 60
        while time.time() < deadline and self.agent_pid(control_socket) is not None:
            time.sleep(0.1)
        self.assertIsNone(self.agent_pid(control_socket), "the control agent did not exit for idleness")
        self.assertEqual(self.agent_pid(), agent, "the forwarded agent exited for idleness")
        again = self.far("tokenbroker token get work")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertTrue(self.emu.validate_access_token(again.stdout.decode().strip()))
        self.assertEqual(self.run_broker("agent", "stop").returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.runtime, "tokenbroker", "forward.keep")))

    def local_refresh_tokens_kept(self):
        return len([i for i in self.keyring_items() if i["attributes"].get("kind") == "refresh-token"]) == 2


@needs_root
@unittest.skipUnless(shutil.which("unshare"), "unshare (util-linux) is not installed")
class ForwardIntoUserNamespaceTest(ForwardTestCase):
    """The forwarding socket bind-mounted into user namespaces: a uid that maps to the agent's is
    served (as under rootless Podman); another uid gets one line and never a token."""

    NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    def setUp(self):
        super().setUp()
        self.local = forward_lines(self)[0]
        self.front = self.binaries_for(self.NOBODY)
        self.target_dir = tempfile.mkdtemp(prefix="tb-ns-")
        self.addCleanup(shutil.rmtree, self.target_dir, True)
        os.chmod(self.target_dir, 0o755)
        self.target = os.path.join(self.target_dir, "forward.sock")
        open(self.target, "w").close()

    def in_namespace(self, prefix, unshare_options, command):
        script = "mount --bind %s %s && %s" % (shlex.quote(self.local), shlex.quote(self.target), command) \
            if "--mount" in unshare_options else command
        env = {"PATH": os.path.dirname(self.front) + ":/usr/bin:/bin", "HOME": "/nonexistent",
               "TOKENBROKER_AGENT_SOCKET": self.target if "--mount" in unshare_options else self.local}
        return subprocess.run(prefix + ["unshare", "--user"] + unshare_options + ["sh", "-c", script],
                              capture_output=True, timeout=60, env=env, stdin=subprocess.DEVNULL)

    def test_a_uid_that_maps_to_the_agents_is_served(self):
        # Root in the namespace is the agent's uid outside, with the socket mounted elsewhere.
        r = self.in_namespace([], ["--map-root-user", "--mount"], "tokenbroker token get work")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
        # uid 1000 in the namespace, the agent's uid outside (as rootless Podman maps a user).
        mapped = self.in_namespace([], ["--map-user=1000", "--map-group=1000"], "id -u; tokenbroker token get work")
        self.assertEqual(mapped.returncode, 0, mapped.stderr)
        uid, token = mapped.stdout.decode().split()
        self.assertEqual(uid, "1000")
        self.assertTrue(self.emu.validate_access_token(token))
        refused = self.in_namespace([], ["--map-root-user", "--mount"], "tokenbroker token get other")
        self.assertEqual((refused.returncode, refused.stdout), (3, b""), refused.stderr)

    def test_another_uid_is_refused_with_one_line_and_no_token(self):
        # Let other users reach the socket file, so that the peer checks, not file modes, decide.
        for d in (self.tmp, self.runtime, os.path.dirname(self.local)):
            os.chmod(d, 0o711)
        os.chmod(self.local, 0o666)
        tokens_before = len(self.emu.state().get("access_tokens", []))
        for prefix, options in ((self.NOBODY, []), (self.NOBODY, ["--map-root-user"])):
            r = subprocess.run(prefix + (["unshare", "--user"] + options if options else []) +
                               [self.front, "token", "get", "work"], capture_output=True, timeout=30,
                               env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "TOKENBROKER_AGENT_SOCKET": self.local},
                               stdin=subprocess.DEVNULL)
            self.assertEqual((r.returncode, r.stdout), (4, b""), r.stderr)
            self.assertEqual(r.stderr.count(b"\n"), 1, r.stderr)
            self.assertIn(("the forwarded agent at " + self.local).encode(), r.stderr)
        # The agent's own check: a raw client of another uid that ignores who listens gets the
        # connection closed unanswered.
        # (A refused connection may be closed before the request is even sent: no byte either way.)
        raw = ("import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(%r)\ntry:\n"
               "    s.sendall(b'v=1\\nop=status\\n'); s.shutdown(socket.SHUT_WR); print(len(s.recv(65536)))\n"
               "except (BrokenPipeError, ConnectionResetError):\n    print(0)\n") % self.local
        served = subprocess.run(["/usr/bin/python3", "-c", raw], capture_output=True, timeout=30)
        self.assertNotEqual(served.stdout.strip(), b"0", "the agent's own uid is answered")
        r = subprocess.run(self.NOBODY + ["/usr/bin/python3", "-c", raw], capture_output=True, timeout=30)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, b"0"), r.stderr)
        self.assertEqual(len(self.emu.state().get("access_tokens", [])), tokens_before)


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(shutil.which("systemd-socket-activate"), "systemd-socket-activate (systemd) is not installed")
class SystemdTwoSocketsTest(ForwardTestCase):
    """contrib/systemd/tokenbroker.socket's two ListenStream lines, passed as systemd passes them
    (systemd-socket-activate: fd 3 the agent's socket, fd 4 the forwarding one, LISTEN_FDS=2): the
    agent serves each socket by its own rules and leaves both socket files to systemd."""

    def test_both_sockets_are_served_each_by_its_rules(self):
        # The agent login started is stopped, so that the one systemd starts serves both.
        self.assertEqual(self.run_broker("agent", "stop").returncode, 0)
        directory = os.path.join(self.runtime, "tokenbroker")
        os.makedirs(directory, 0o700, exist_ok=True)  # DirectoryMode=0700
        own, forward = os.path.join(directory, "agent.sock"), os.path.join(directory, "forward.sock")
        for path in (own, forward):
            if os.path.exists(path):
                os.unlink(path)
        # systemd starts a unit with the user manager's environment; the activator passes only -E's.
        passed = [a for name in self.env() for a in ("-E", name)]
        activator = subprocess.Popen(
            ["systemd-socket-activate", "-l", own, "-l", forward] + passed + [CORE, "--verbose", "agent", "run"],
            env=self.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.addCleanup(lambda: activator.poll() is None and (activator.kill(), activator.wait()))
        deadline = time.time() + 30
        while not (os.path.exists(own) and os.path.exists(forward)) and time.time() < deadline:
            time.sleep(0.05)
        for path in (own, forward):
            os.chmod(path, 0o600)  # SocketMode=0600 (systemd-socket-activate leaves the umask's)

        mine = self.run_broker("token", "get", "other")
        self.assertEqual(mine.returncode, 0, mine.stderr)
        self.assertTrue(self.emu.validate_access_token(mine.stdout.decode().strip()))
        [agent] = self.agents_of_test()
        self.assertEqual(agent, activator.pid, "the agent is the process systemd started")

        far = self.env()
        far["TOKENBROKER_AGENT_SOCKET"] = forward
        served = self.run_broker("token", "get", "work", env=far)
        self.assertEqual(served.returncode, 0, served.stderr)
        self.assertTrue(self.emu.validate_access_token(served.stdout.decode().strip()))
        refused = self.run_broker("token", "get", "other", env=far)
        self.assertEqual((refused.returncode, refused.stdout), (3, b""), refused.stderr)
        login = self.run_broker("login", "work", "--device-code", env=far)
        self.assertEqual(login.returncode, 64, login.stderr)
        self.assertEqual(login.stderr.count(b"\n"), 1, login.stderr)
        self.assertEqual(self.agents_of_test(), [agent], "one agent, for both sockets")

        self.assertEqual(self.run_broker("agent", "stop").returncode, 0)
        activator.wait(timeout=30)
        self.assertEqual(activator.returncode, 0, activator.stderr.read())
        for path in (own, forward):
            self.assertTrue(os.path.exists(path), "systemd's socket %s must stay" % path)
        kinds = [i["attributes"].get("kind") for i in self.keyring_items()]
        self.assertEqual(kinds.count("refresh-token"), 2, kinds)
