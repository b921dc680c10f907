"""Attacks on the resident agent (interface.md §4, §8): clients that send nothing or crawl, many
idle connections, oversized and malformed requests, `run` requests for commands the agent must not
run, git requests smuggled through `in[]` lines (bug-cases.md B15, B16, B17), clients that go away
mid-reply, symlinks planted at the socket and lock paths, and 20 concurrent `agent start`.

Each test checks that the agent answers a well-formed client promptly afterwards: it neither hung
nor crashed nor leaked a token.
"""
import os
import socket
import subprocess
import threading
import time

from agent_flows import AgentTestCase, CORE, GIT_GET
from harness import TOKENBROKER


class AgentAttackCase(AgentTestCase):

    def setUp(self):
        super().setUp()
        self.rt = self.signed_in()
        self.token = self.git_password(self.run_broker("get", input=GIT_GET))
        self.pid = self.wait_until(self.agent_pid, what="the agent")

    def raw(self, payload, shutdown=True, timeout=15):
        """Sends `payload` on a new connection and returns everything the agent sent back."""
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(timeout)
        try:
            s.connect(self.socket)
        except OSError:
            s.close()
            raise
        data = b""
        try:
            s.sendall(payload)
            if shutdown:
                s.shutdown(socket.SHUT_WR)
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except (ConnectionResetError, BrokenPipeError):
            pass
        finally:
            s.close()
        return data

    def assert_serves_promptly(self, bound=3.0):
        start = time.monotonic()
        reply = self.raw(b"v=1\nop=status\n", timeout=bound + 5)
        self.assertIn(b"exit=0\n", reply)
        self.assertLess(time.monotonic() - start, bound, "a status request waited behind the attack")
        r = self.run_broker("get", input=GIT_GET, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.git_password(r), self.token)
        self.assertEqual(self.agent_pid(), self.pid, "the agent was replaced (it crashed)")

    def agent_running(self):
        """False once the agent's process has ended."""
        try:
            with open("/proc/%d/stat" % self.pid) as f:
                return f.read().split(")")[-1].split()[0] != "Z"
        except OSError:
            return False

    def bus_line(self):
        """The `bus=` field of a `run` request from this test's session (older agents ignore it)."""
        return b"bus=" + self.env().get("DBUS_SESSION_BUS_ADDRESS", "").encode() + b"\n"

    def cpu_ticks(self):
        with open("/proc/%d/stat" % self.pid) as f:
            fields = f.read().split(")")[-1].split()
        return int(fields[11]) + int(fields[12])


class SlowClientsTest(AgentAttackCase):

    def test_silent_and_crawling_clients_do_not_delay_others(self):
        silent = []
        for _ in range(50):
            s = socket.socket(socket.AF_UNIX)
            s.connect(self.socket)
            silent.append(s)
        self.addCleanup(lambda: [s.close() for s in silent])
        stop = threading.Event()

        def crawl():
            s = socket.socket(socket.AF_UNIX)
            s.connect(self.socket)
            try:
                for b in b"v=1\nop=status\n":
                    if stop.wait(1):
                        break
                    s.send(bytes([b]))
            except OSError:
                pass
            s.close()

        t = threading.Thread(target=crawl)
        t.start()
        self.addCleanup(t.join)
        self.addCleanup(stop.set)
        time.sleep(0.5)
        self.assert_serves_promptly()

    def test_silent_client_is_dropped_after_the_read_bound(self):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(20)
        s.connect(self.socket)
        start = time.monotonic()
        self.assertEqual(s.recv(10), b"")
        s.close()
        self.assertLess(time.monotonic() - start, 15)
        self.assert_serves_promptly()

    def test_hundreds_of_idle_connections(self):
        held = []
        for _ in range(400):
            s = socket.socket(socket.AF_UNIX)
            s.connect(self.socket)
            held.append(s)
        self.assert_serves_promptly()
        for s in held:
            s.close()
        self.assert_serves_promptly()


class FdExhaustionTest(AgentTestCase):
    """The agent under a low descriptor limit: more idle connections than it may open."""

    def test_out_of_descriptors_neither_spins_nor_dies(self):
        self.signed_in()
        env = self.env()
        p = subprocess.Popen(["prlimit", "--nofile=64:64", CORE, "agent", "run"], env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(self._reap, p)
        pid = self.wait_until(self.agent_pid, what="the agent")
        held = []
        for _ in range(120):
            s = socket.socket(socket.AF_UNIX)
            s.connect(self.socket)
            held.append(s)
        time.sleep(0.3)

        def ticks():
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().split(")")[-1].split()
            return int(fields[11]) + int(fields[12])

        before = ticks()
        time.sleep(2)
        used = ticks() - before
        hz = os.sysconf("SC_CLK_TCK")
        self.assertLess(used, hz * 0.5, "the agent spun at %.0f%% CPU while out of descriptors" % (100 * used / hz / 2))
        for s in held:
            s.close()
        # Connections still in the backlog are served (or dropped) once descriptors are free again.
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(5)
                s.connect(self.socket)
                s.sendall(b"v=1\nop=status\n")
                s.shutdown(socket.SHUT_WR)
                reply = s.recv(65536)
                s.close()
                if b"exit=0" in reply:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            self.fail("the agent did not recover after the idle connections closed")
        self.assertEqual(self.agent_pid(), pid)


    def test_a_first_keyring_lookup_while_flooded_with_idle_connections(self):
        """A just-started agent under a low descriptor limit, held full of idle connections, still
        makes its first keyring lookup and answers `token get` with the token the keyring holds:
        it keeps descriptors in reserve. The keyring connection made at the agent's start does not
        settle this: each of libsecret's blocking calls makes a GLib main context, whose wakeup
        needs a descriptor of its own (with no reserve kept, this test fails)."""
        self.signed_in()
        cached = set(self.cached_access_tokens().values())
        self.assertEqual(len(cached), 1, cached)
        env = self.env()
        p = subprocess.Popen(["prlimit", "--nofile=128:128", CORE, "agent", "run"], env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(self._reap, p)
        pid = self.wait_until(self.agent_pid, what="the agent")
        held = []
        self.addCleanup(lambda: [s.close() for s in held])
        for _ in range(300):
            s = socket.socket(socket.AF_UNIX)
            s.setblocking(False)
            try:
                s.connect(self.socket)
            except BlockingIOError:
                pass
            held.append(s)
        time.sleep(0.5)
        # Sent on the socket itself: a front that finds no room would run the command itself.
        bus = env.get("DBUS_SESSION_BUS_ADDRESS", "").encode()
        payload = b"v=1\nop=run\nname=tokenbroker\nconfig=\nbus=" + bus + b"\narg[]=token\narg[]=get\narg[]=work\n"
        c = socket.socket(socket.AF_UNIX)
        c.settimeout(30)
        c.connect(self.socket)
        c.sendall(payload)
        c.shutdown(socket.SHUT_WR)
        reply = b""
        try:
            while chunk := c.recv(65536):
                reply += chunk
        except OSError:
            pass
        c.close()
        token = cached.pop()
        self.assertIn(b"exit=0\n", reply)
        self.assertIn(token.encode(), reply)
        self.assertIsNone(p.poll(), "the agent died: %s" % (p.communicate()[1].decode(errors="replace") if p.poll() is not None else ""))
        self.assertEqual(self.agent_pid(), pid)


class MalformedRequestTest(AgentAttackCase):

    def test_oversized_request_is_refused(self):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(15)
        s.connect(self.socket)
        sent = 0
        chunk = b"in[]=" + b"a" * 65000 + b"\n"
        try:
            while sent < 10 * 1024 * 1024:
                s.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.assertLess(sent, 10 * 1024 * 1024, "the agent kept reading past its cap")
        s.close()
        self.assert_serves_promptly()

    def test_malformed_requests_get_no_answer(self):
        bad = [
            b"op=status\n",  # no v
            b"v=2\nop=status\n",
            b"op=status\nv=1\n",  # v not first
            b"v=1\nv=1\nop=status\n",
            b"v=1\nop=status\nop=stop\n",
            b"v=1\nop=st\x00atus\n",
            b"v=1\nop=status\rop=stop\n",
            b"v=1\nop=\xff\xfe\n",
            b"v=1\n",
            b"v=1\nop=run\n",  # no name
            b"v=1\nop=nonsense\n",
            b"",
            b"\n\n\n",
            b"v=1\nop=run\nname=tokenbroker\narg[]=get\nin[]=\xc3\x28\n",
            b"v=1\nop=run\nname=tokenbroker\narg[]=get\nin[]=host=a\rhost=b\n",
            b"=\n" * 100,
            b"v" * 70000,
        ]
        for payload in bad:
            with self.subTest(payload=payload[:40]):
                self.assertEqual(self.raw(payload), b"")
        self.assert_serves_promptly()

    def test_commands_the_agent_must_not_run_are_not_served(self):
        cases = [
            ("tokenbroker", ["login", "work"]),
            ("tokenbroker", ["login", "work", "--device-code"]),
            ("tokenbroker", ["logout", "work"]),
            ("tokenbroker", ["revoke", "work"]),
            ("tokenbroker", ["account", "add", "x", "--provider", "azure"]),
            ("tokenbroker", ["setup-git"]),
            ("tokenbroker", ["agent", "stop"]),
            ("tokenbroker", ["agent", "run"]),
            ("tokenbroker", ["--config", "/etc/passwd", "get"]),
            ("tokenbroker", ["token", "get", "work", "--config=/tmp/x"]),
            ("tokenbroker", ["get", "--", "login"]),
            ("tokenbroker", ["--verbose", "logout", "work"]),
            ("tokenbroker-core", ["logout", "work"]),
            ("git-credential-tokenbroker", ["login"]),
            ("git-credential-tokenbroker/", ["logout", "work"]),
            ("/", ["logout", "work"]),
            ("tokenbroker//", ["logout", "work"]),
            ("docker-credential-tokenbroker", ["version"]),
            ("docker-credential-x/", ["list"]),
            ("", ["logout", "work"]),
        ]
        for name, args in cases:
            with self.subTest(name=name, args=args):
                payload = b"v=1\nop=run\nname=" + name.encode() + b"\nconfig=\n" + self.bus_line()
                payload += b"".join(b"arg[]=" + a.encode() + b"\n" for a in args)
                reply = self.raw(payload)
                self.assertIn(reply, (b"", b"v=1\nexit=-1\n"), reply)
        # Still signed in, still one agent, still the same token.
        self.assert_serves_promptly()
        self.assertEqual(self.stored_refresh_token(), self.rt)

    def test_git_requests_smuggled_through_input_lines(self):
        attacks = [
            # B15: a second host after an injected line break cannot exist: each in[] is one line.
            ["protocol=https", "host=evil.test", "host=git.example.test"],
            ["protocol=https", "host=git.example.test", "host=evil.test"],
            ["url=https://evil.test%0ahost=git.example.test"],
            ["url=https://git.example.test%0a@evil.test/"],
            ["protocol=https", "host=evil.test", "url=https://git.example.test/"],
            # B16: blank or partial requests are no wildcard.
            [],
            [""],
            ["protocol=https"],
            ["host=git.example.test"],
            ["protocol=https", "", "host=git.example.test"],
            ["protocol=https", "host="],
            ["protocol=http", "host=git.example.test"],
            # B17: a lone CR is not a line break (the framing refuses CR in a value outright).
        ]
        for lines in attacks:
            with self.subTest(lines=lines):
                payload = b"v=1\nop=run\nname=git-credential-tokenbroker\nconfig=\n" + self.bus_line() + b"arg[]=get\n"
                payload += b"".join(b"in[]=" + l.encode() + b"\n" for l in lines)
                reply = self.raw(payload)
                self.assertNotIn(self.token.encode(), reply)
                self.assertNotIn(b"password", reply)
        for raw in [b"in[]=protocol=https\rhost=git.example.test\n", b"in[]=host=evil.test\r\r\n"]:
            payload = b"v=1\nop=run\nname=git-credential-tokenbroker\nconfig=\n" + self.bus_line() + b"arg[]=get\n" + raw
            self.assertEqual(self.raw(payload), b"")
        self.assert_serves_promptly()


class RawProtocolFuzzTest(AgentAttackCase):

    def test_mutated_requests_never_crash_the_agent_or_leak_a_token(self):
        """Byte-level mutations of requests that must not yield a token (another host, no
        protocol, a status); ~8 s. TB_FUZZ_SEED replays a run."""
        import random
        seed = int(os.environ.get("TB_FUZZ_SEED", random.randrange(1 << 30)))
        r = random.Random(seed)
        head = b"v=1\nop=run\nname=git-credential-tokenbroker\nconfig=\n" + self.bus_line() + b"arg[]=get\n"
        bases = [head + b"in[]=protocol=https\nin[]=host=evil.test\n",
                 head + b"in[]=host=git.example.test\nin[]=path=x\n",
                 head + b"in[]=protocol=http\nin[]=host=git.example.test\n",
                 b"v=1\nop=status\n", b"v=1\nop=drop\naccount=nobody\n"]
        end = time.monotonic() + 8
        n = restarts = 0
        while time.monotonic() < end:
            n += 1
            b = bytearray(r.choice(bases))
            for _ in range(r.randrange(1, 6)):
                i = r.randrange(len(b) + 1)
                op = r.randrange(5)
                if op == 0 and i < len(b):
                    b[i] = r.choice([0, 10, 13, 0x3d, 0xff, 0xc3, r.randrange(256)])
                elif op == 1 and i < len(b):
                    del b[i]
                elif op == 2:
                    b[i:i] = r.choice([b"\n", b"\r\n", b"\r", b"\0", b"=", b"[]", b"v=1\n", b"op=stop\n",
                                       b"in[]=\n", b"in-noeol=1\n", b"arg[]=--verbose\n", b"\xe2\x80\xa8"])
                elif op == 3:
                    b = b[:i]
                else:
                    b[i:i] = b[max(0, i - 20):i]
            if not os.path.exists(self.socket):
                # An earlier request stopped the agent (`op=stop`, or a `run` from another D-Bus
                # session), which is allowed: it removed its socket, so it exited in order. Start
                # it again.
                self.wait_until(lambda: not self.agent_running(), what="the stopped agent exiting")
                self.assertEqual(self.run_broker("agent", "start").returncode, 0)
                self.pid = self.wait_until(self.agent_pid, what="the agent")
                restarts += 1
            start = time.monotonic()
            try:
                reply = self.raw(bytes(b), timeout=15)
            except FileNotFoundError:
                continue  # stopping right now
            except ConnectionRefusedError:
                self.fail("seed %d: the agent died, leaving its socket behind" % seed)
            self.assertLess(time.monotonic() - start, 5, "seed %d: slow answer to %r" % (seed, bytes(b)))
            self.assertNotIn(self.token.encode(), reply, "seed %d: %r" % (seed, bytes(b)))
            # Alive, or it stopped in order (it removes its socket before it exits): checked in
            # this order, since the reply reaches us before a stopping agent has exited.
            if not self.agent_running():
                self.assertFalse(os.path.exists(self.socket), "seed %d: the agent died on %r" % (seed, bytes(b)))
        self.assertGreater(n, 100)
        if os.environ.get("TB_FUZZ_SEED") or os.environ.get("TB_FUZZ_VERBOSE"):
            print("\n  agent fuzz seed %d: %d requests, %d orderly stops" % (seed, n, restarts))
        # The last mutation may have stopped the agent: stop it for sure, then start a fresh one.
        self.assertEqual(self.run_broker("agent", "stop").returncode, 0)
        self.wait_until(lambda: not self.agent_running(), what="the stopped agent exiting")
        self.assertEqual(self.run_broker("agent", "start").returncode, 0)
        self.pid = self.wait_until(self.agent_pid, what="the agent")
        self.assert_serves_promptly()


class ClientGoesAwayTest(AgentAttackCase):

    def test_client_closing_before_the_reply(self):
        for shut in (True, False):
            for _ in range(20):
                s = socket.socket(socket.AF_UNIX)
                s.connect(self.socket)
                s.sendall(b"v=1\nop=run\nname=tokenbroker\nconfig=\n" + self.bus_line() +
                          b"arg[]=get\nin[]=protocol=https\nin[]=host=git.example.test\n")
                if shut:
                    s.shutdown(socket.SHUT_WR)
                s.close()
        # A client that reads one byte of a reply and resets the connection.
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.socket)
        s.sendall(b"v=1\nop=status\n")
        s.shutdown(socket.SHUT_WR)
        s.recv(1)
        s.close()
        time.sleep(0.5)
        self.assert_serves_promptly()


class ClosedStandardStreamTest(AgentAttackCase):

    def test_a_closed_standard_stream_never_becomes_the_agent_socket(self):
        """Started with fd 0, 1 or 2 closed (cron, daemons), the front's socket once took that
        number: with stderr closed the agent's error went into the socket and SIGPIPE ended the
        front (141, not 64); with stdout closed the token did (141, not 0); with stdin closed the
        front read the socket as its input until the agent dropped it 10 s later. Each call must
        end as tokenbroker-core ends the same call, with the agent serving it."""
        cases = [(("token", "get", "nosuch"), 2, b""), (("token", "get", "work"), 1, b""),
                 (("get",), 0, b""), (("get",), 2, GIT_GET.encode()), (("get",), 1, GIT_GET.encode())]
        for args, closed, data in cases:
            outcome = {}
            for program in (TOKENBROKER, CORE):
                feed = {"stdin": subprocess.DEVNULL} if closed == 0 else {"input": data}
                r = subprocess.run(["bash", "-c", 'exec %d>&- "$0" "$@"' % closed, program] + list(args),
                                   capture_output=True, env=self.env(), timeout=60, **feed)
                outcome[program] = (r.returncode, r.stdout)
            self.assertEqual(outcome[TOKENBROKER], outcome[CORE], (args, closed))
        self.assert_serves_promptly(bound=10)

    def test_a_stdout_pipe_closed_early_ends_the_call_as_the_core_ends_it(self):
        """A reader that went away before the answer (`| head -c0`, a caller that reads
        no more) costs the output, not the exit status. tokenbroker-core gets EPIPE there (GLib,
        which it loads for the keyring, ignores SIGPIPE) and exits with the command's status; the
        front, writing the agent's answer, was killed by SIGPIPE (141 in a shell)."""
        cases = [(("token", "get", "work"), b""), (("get",), GIT_GET.encode()),
                 (("token", "get", "nosuch"), b"")]
        for args, data in cases:
            outcome = {}
            for program in (TOKENBROKER, CORE):
                read_end, write_end = os.pipe()
                os.close(read_end)
                try:
                    r = subprocess.run([program] + list(args), input=data, stdout=write_end,
                                       stderr=subprocess.PIPE, env=self.env(), timeout=60)
                finally:
                    os.close(write_end)
                outcome[program] = r.returncode
            self.assertEqual(outcome[TOKENBROKER], outcome[CORE], args)
            self.assertGreaterEqual(outcome[TOKENBROKER], 0, args)
        self.assertEqual(outcome[TOKENBROKER], 64)  # `nosuch`: an unknown account (§6), as ever
        self.assert_serves_promptly(bound=10)


class PlantedPathsTest(AgentTestCase):

    @property
    def directory(self):
        return os.path.join(self.runtime, "tokenbroker")

    def run_agent(self):
        return subprocess.run([CORE, "agent", "run"], env=self.env(),
                              capture_output=True, timeout=30, stdin=subprocess.DEVNULL)

    def test_symlink_at_the_lock_path_is_not_followed(self):
        os.makedirs(self.directory, mode=0o700)
        victim = os.path.join(self.tmp, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        os.symlink(victim, self.socket + ".lock")
        r = self.run_agent()
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(len(r.stderr.decode().splitlines()), 1, r.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        # The front still serves calls (through the full program).
        self.signed_in()
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)

    def test_symlink_at_the_socket_path_is_replaced_not_followed(self):
        os.makedirs(self.directory, mode=0o700)
        victim = os.path.join(self.tmp, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        os.symlink(victim, self.socket)
        self.signed_in()
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertFalse(os.path.islink(self.socket))

    def test_runtime_directory_replaced_by_a_symlink_is_refused(self):
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.makedirs(elsewhere, mode=0o700)
        os.symlink(elsewhere, self.directory)
        r = self.run_broker("agent", "run")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"not a directory", r.stderr)
        self.assertEqual(os.listdir(elsewhere), [])


class ConcurrentStartTest(AgentTestCase):

    def test_twenty_concurrent_agent_starts_leave_one_agent(self):
        self.signed_in()
        results = self.run_many([["agent", "start"]] * 20)
        for r in results:
            self.assertEqual(r.returncode, 0, r.stderr)
        time.sleep(1.5)
        self.assertEqual(len(self.agents()), 1, self.agents())
        self.assertEqual(self.run_broker("agent", "status").returncode, 0)


class LargeInputTest(AgentTestCase):
    """A valid git request larger than the front's 60 KiB input limit (many `wwwauth[]` lines)
    goes to the full program whole, however the input arrives: here in pieces, so the front's reads
    come back short."""

    def test_large_request_written_in_pieces(self):
        self.signed_in()
        for host, served in (("git.example.test", True), ("evil.test", False)):
            for first in (30000, 60000, 61000):
                with self.subTest(host=host, first=first):
                    p = subprocess.Popen([TOKENBROKER, "get"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=self.env())
                    p.stdin.write(b"protocol=https\nhost=" + host.encode() + b"\nwwwauth[]=" + b"a" * first + b"\n")
                    p.stdin.flush()
                    time.sleep(0.3)
                    p.stdin.write(b"wwwauth[]=" + b"b" * 20000 + b"\n\n")
                    p.stdin.close()
                    out, err = p.stdout.read(), p.stderr.read()
                    p.wait(30)
                    self.assertEqual(p.returncode, 0, err)
                    self.assertEqual(b"password=" in out, served, (out, err))
                    self.assertEqual(err, b"")
