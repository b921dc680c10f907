"""Who may talk to the agent (interface.md §2, §8): the `SO_PEERCRED` uid check on every
connection, the socket directory's owner and mode, the socket's mode.

Bug cases (bug-cases.md): B07's multi-user variant (the socket and locks live in each
user's private runtime directory).
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

from agent_flows import AgentTestCase
from harness import TOKENBROKER

# A raw client: connects, sends a status request, prints what came back (nothing when refused).
CLIENT = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected", flush=True)
data = b""
try:
    s.sendall(b"v=1\nop=status\n")
    s.shutdown(socket.SHUT_WR)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except OSError as e:
    print("error", e.errno, flush=True)
print("reply", repr(data), flush=True)
"""
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
needs_root = unittest.skipUnless(os.geteuid() == 0, "needs root (another uid: setpriv, chown)")


@needs_root
class PeerCheckTest(AgentTestCase):

    def public_socket(self):
        """A socket path in a 0755 directory another uid can reach (the agent accepts an
        explicit TOKENBROKER_AGENT_SOCKET there: others cannot write to it)."""
        pub = tempfile.mkdtemp(prefix="tb-pub-")
        os.chmod(pub, 0o755)
        self.addCleanup(shutil.rmtree, pub, True)
        return os.path.join(pub, "agent.sock")

    def start_agent(self, env):
        p = subprocess.Popen([TOKENBROKER, "--verbose", "agent", "run"], env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(self._reap, p)
        sock = env["TOKENBROKER_AGENT_SOCKET"]
        self.wait_until(lambda: self.run_broker("agent", "status", env=env).returncode == 0, what="the agent answering")
        return p, sock

    def test_another_uid_is_refused_by_the_peer_check(self):
        env = self.env(TOKENBROKER_AGENT_SOCKET=self.public_socket())
        p, sock = self.start_agent(env)
        self.assertEqual(os.stat(sock).st_mode & 0o777, 0o600)
        # Let the kernel admit uid 65534 (it may connect to the file), so that only the agent's
        # own check can stop it.
        os.chmod(sock, 0o666)
        # /usr/bin/python3 and CLIENT (passed inline) are all the other uid needs: nothing from the checkout.
        other = subprocess.run(NOBODY + ["/usr/bin/python3", "-I", "-c", CLIENT, sock], capture_output=True,
                               timeout=30)
        self.assertIn(b"connected", other.stdout, other.stderr)
        self.assertIn(b"reply b''", other.stdout)
        own = subprocess.run(["/usr/bin/python3", "-I", "-c", CLIENT, sock], capture_output=True, timeout=30)
        self.assertIn(b"exit=0", own.stdout)
        self.assertIn(b"pid=", own.stdout)
        stop = self.run_broker("agent", "stop", env=env)
        self.assertEqual(stop.returncode, 0, stop.stderr)
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn(b"refused a connection from uid 65534", err)
        self.assertEqual(err.count(b"refused a connection"), 1, err)

    def test_front_of_another_user_never_reaches_the_agent(self):
        """The front refuses a socket directory owned by someone else and runs the full program
        instead (which, here, knows no account): it never talks to our agent. The other user runs
        copies of the binaries (`binaries_for`): the checkout may sit in a home it cannot enter."""
        env = self.env(TOKENBROKER_AGENT_SOCKET=self.public_socket())
        self.start_agent(env)
        os.chmod(env["TOKENBROKER_AGENT_SOCKET"], 0o666)
        other_env = dict(env, HOME="/nonexistent", XDG_CONFIG_HOME="/nonexistent", XDG_RUNTIME_DIR="/nonexistent")
        front = self.binaries_for(NOBODY)
        r = subprocess.run(NOBODY + [front, "token", "get", "work"], env=other_env, capture_output=True,
                           timeout=30, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertEqual(r.stdout, b"")


    def test_front_never_talks_to_a_socket_another_user_serves(self):
        """A warm call is one connect, with no look at the socket's directory: the kernel's record
        of who listens (SO_PEERCRED) must be the caller's uid before a byte is sent. A server of
        uid 65534 gets no request (no git input, no argument), and the call is served by the full
        program. The server counts the connections it accepts: the calls did connect (a front that
        never tried would pass the rest too)."""
        self.signed_in()
        self.run_broker("agent", "stop")
        theirs = tempfile.mkdtemp(prefix="tb-theirs-")
        self.addCleanup(shutil.rmtree, theirs, True)
        os.chmod(theirs, 0o755)
        os.chown(theirs, 65534, 65534)
        sock, log = os.path.join(theirs, "agent.sock"), os.path.join(theirs, "received")
        accepted = os.path.join(theirs, "accepted")
        server = subprocess.Popen(NOBODY + ["/usr/bin/python3", "-I", "-c", PLANTED, sock, log, accepted],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(self._reap, server)
        self.assertEqual(server.stdout.readline().strip(), b"listening")
        env = self.env(TOKENBROKER_AGENT_SOCKET=sock)
        git = self.run_broker("get", input=b"protocol=https\nhost=git.example.test\n\n", env=env)
        self.assertEqual(git.returncode, 0, git.stderr)
        self.assertIn(b"password=", git.stdout)
        token = self.run_broker("token", "get", "work", env=env)
        self.assertEqual(token.returncode, 0, token.stderr)
        # Each call connected at least once (the server may accept a connection after its client
        # has already closed it: wait, generously, before stopping the server).
        deadline, connects = time.time() + 30, 0
        while time.time() < deadline:
            with open(accepted, "rb") as f:
                connects = f.read().count(b"\n")
            if connects >= 2:
                break
            time.sleep(0.05)
        self.assertGreaterEqual(connects, 2, "the calls never connected to the socket")
        server.terminate()
        server.wait(timeout=30)
        with open(log, "rb") as f:
            received = f.read()
        self.assertNotIn(b"op=", received)
        self.assertNotIn(b"git.example.test", received)
        self.assertEqual(self.agents(), [])


# A server of another uid at the socket path: records every byte any client sends it (argv[2])
# and a line per connection it accepts (argv[3]).
PLANTED = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
s.listen(16)
open(sys.argv[3], "wb").close()
print("listening", flush=True)
with open(sys.argv[2], "ab", buffering=0) as log, open(sys.argv[3], "ab", buffering=0) as accepted:
    while True:
        c, _ = s.accept()
        accepted.write(b"accepted\n")
        c.settimeout(5)
        try:
            while True:
                data = c.recv(65536)
                if not data:
                    break
                log.write(data)
        except OSError:
            pass
        c.close()
"""


class SocketDirectoryTest(AgentTestCase):

    @property
    def directory(self):
        return os.path.join(self.runtime, "tokenbroker")

    def assert_refused_but_calls_work(self, problem):
        r = self.run_broker("agent", "run")
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("refusing to use '%s'" % self.directory, lines[0])
        self.assertIn(problem, lines[0])
        start = self.run_broker("agent", "start")
        self.assertEqual(start.returncode, 1, start.stderr)
        self.assertIn(problem.encode(), start.stderr)
        # The hot paths still work: the front runs them in the full program.
        for _ in range(3):
            token = self.run_broker("token", "get", "work")
            self.assertEqual(token.returncode, 0, token.stderr)
        self.assertEqual(self.agents(), [])
        self.assertFalse(os.path.exists(self.socket))

    def test_runtime_directory_open_to_others_is_refused(self):
        self.signed_in()  # (login itself needs the private directory for its lock)
        os.chmod(self.directory, 0o755)
        self.assert_refused_but_calls_work("mode 755 lets others in")
        self.assertEqual(os.stat(self.directory).st_mode & 0o777, 0o755, "never chmod-ed behind the user's back")

    @needs_root
    def test_runtime_directory_of_another_owner_is_refused(self):
        self.signed_in()
        os.chown(self.directory, 65534, 65534)
        self.assert_refused_but_calls_work("owned by uid 65534")

    def test_explicit_socket_directory_writable_by_others_is_refused(self):
        pub = tempfile.mkdtemp(prefix="tb-pub-")
        self.addCleanup(shutil.rmtree, pub, True)
        os.chmod(pub, 0o777)
        env = self.env(TOKENBROKER_AGENT_SOCKET=os.path.join(pub, "agent.sock"))
        r = self.run_broker("agent", "run", env=env)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"mode 777 lets others in", r.stderr)
        self.assertEqual(os.listdir(pub), [])

    def test_runtime_directory_is_created_0700_with_a_0600_socket(self):
        self.signed_in()
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)
        self.assertEqual(os.stat(self.directory).st_mode & 0o777, 0o700)
        self.assertEqual(os.stat(self.socket).st_mode & 0o777, 0o600)
        self.assertEqual(os.stat(self.socket + ".lock").st_mode & 0o777, 0o600)
        [pid] = self.agents()
        with open(self.socket + ".lock") as f:
            self.assertEqual(int(f.read()), pid)
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(self.socket)


if __name__ == "__main__":
    unittest.main()
