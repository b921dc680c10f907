"""The agent's life (interface.md §3 `agent`, §8): started on first use or by `agent start`,
`status`, `stop`, the idle timeout, `agent = off`, another config, systemd socket activation,
and a SIGKILL in the middle of a refresh.
"""
import os
import re
import signal
import socket
import subprocess
import time
import unittest

from agent_flows import CORE, GIT_GET, AgentTestCase
from harness import ROOT, TOKENBROKER


class AgentCommandsTest(AgentTestCase):

    def test_status_start_stop(self):
        status = self.run_broker("agent", "status")
        self.assertEqual(status.returncode, 1, status.stderr)
        self.assertEqual(status.stdout.decode(), "no agent running at %s\n" % self.socket)
        start = self.run_broker("agent", "start")
        self.assertEqual(start.returncode, 0, start.stderr)
        self.assertEqual(start.stdout.decode(),
                         "TOKENBROKER_AGENT_SOCKET=%s; export TOKENBROKER_AGENT_SOCKET;\n" % self.socket)
        [pid] = self.agents()
        again = self.run_broker("agent", "start")
        self.assertEqual(again.stdout, start.stdout)
        self.assertEqual(self.agents(), [pid])
        status = self.run_broker("agent", "status", "--json")
        self.assertEqual(status.returncode, 0, status.stderr)
        self.assertIn('"pid":%d' % pid, status.stdout.decode().replace(" ", ""))
        # The line works with eval: a shell gets the same agent through the variable.
        sh = subprocess.run(["sh", "-c", 'eval "$(%s agent start)"; %s agent status' % (TOKENBROKER, TOKENBROKER)],
                            capture_output=True, env=self.env(), timeout=30)
        self.assertEqual(sh.returncode, 0, sh.stderr)
        self.assertIn(b"(pid %d)" % pid, sh.stdout)
        stop = self.run_broker("agent", "stop")
        self.assertEqual(stop.returncode, 0, stop.stderr)
        self.assertEqual(self.agents(), [])
        self.assertFalse(os.path.exists(self.socket))
        self.assertEqual(self.run_broker("agent", "status").returncode, 1)
        again = self.run_broker("agent", "stop")
        self.assertEqual(again.returncode, 0)
        self.assertIn(b"no agent was running", again.stderr)

    def test_usage_errors(self):
        for args in (("agent",), ("agent", "dance"), ("agent", "run", "extra"), ("agent", "status", "--bogus")):
            r = self.run_broker(*args)
            self.assertEqual(r.returncode, 64, (args, r.stderr))
            self.assertTrue(r.stderr.startswith(b"error: "), r.stderr)
        self.assertEqual(self.run_broker("agent", "--help").returncode, 0)

    def test_first_call_starts_one_agent_and_later_calls_reuse_it(self):
        self.signed_in()
        self.assertEqual(self.agents(), [])
        first = self.run_broker("token", "get", "work")
        self.assertEqual(first.returncode, 0, first.stderr)
        [pid] = self.agents()
        for args, data in ((("token", "get", "work"), b""), (("get",), GIT_GET), (("capability",), b"")):
            r = self.run_broker(*args, input=data)
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.agents(), [pid])
        self.assertEqual(self.refresh_requests(), [])

    def test_idle_agent_exits(self):
        """Started by `agent start`, which waits for it: a `token get` that starts it may, under
        load, give up on it after the front's start bound and serve the call itself, and with a
        1 s idle timeout the agent can then be gone before the test looks."""
        self.write_agent_config(extra_broker="agent-idle-timeout = 1")
        self.signed_in()
        self.assertEqual(self.run_broker("agent", "start").returncode, 0)
        [pid] = self.agents()
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)
        self.wait_until(lambda: not self.agents(), timeout=15, what="the idle agent exiting")
        self.assertFalse(os.path.exists(self.socket))
        again = self.run_broker("token", "get", "work")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertNotIn(pid, self.agents())

    def test_an_agent_that_cannot_start_is_not_waited_for(self):
        """A config error (a typo) makes the agent the front starts exit at once (64): the front
        then runs the full program, which reports the error, instead of polling the socket for
        its whole start bound (3 s) on every call. Five calls, 15 s of waiting before."""
        self.write_config(self.default_config(extra_broker="refresh-margin = soon"))
        started = time.monotonic()
        for _ in range(5):
            r = self.run_broker("get", input=GIT_GET)
            self.assertEqual((r.returncode, r.stdout), (64, b""), r.stderr)
            self.assertIn(b"refresh-margin", r.stderr)
        self.assertLess(time.monotonic() - started, 10)
        self.assertEqual(self.agents(), [])

    def test_agent_off_never_starts_one(self):
        self.write_agent_config(extra_broker="agent = off")
        self.signed_in()
        for args, data in ((("token", "get", "work"), b""), (("get",), GIT_GET), (("erase",), GIT_GET)):
            r = self.run_broker(*args, input=data)
            self.assertEqual(r.returncode, 0, r.stderr)
        git = self.run_broker("get", argv0="git-credential-tokenbroker", input=GIT_GET)
        self.assertIn(b"password=", git.stdout)
        self.assertEqual(self.agents(), [])
        self.assertFalse(os.path.exists(os.path.join(self.runtime, "tokenbroker", "agent.sock")))
        self.assertFalse(os.path.exists(os.path.join(self.runtime, "tokenbroker", "agent.sock.lock")))

    def test_agent_off_past_a_megabyte_never_starts_one(self):
        """The front reads `[broker] agent` from the whole file: past 1 MiB of comments too."""
        padding = ("# " + "x" * 76 + "\n") * (1 << 14)  # 1.25 MiB before the settings
        self.write_config(padding + self.default_config(extra_broker="agent = off"))
        self.signed_in()
        for args, data in ((("token", "get", "work"), b""), (("get",), GIT_GET)):
            r = self.run_broker(*args, input=data)
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.agents(), [])
        self.assertFalse(os.path.exists(os.path.join(self.runtime, "tokenbroker", "agent.sock")))

    def test_another_config_is_served_by_the_full_program(self):
        """An agent serves the config it was started with; a call with `--config` (or
        TOKENBROKER_CONFIG) for another file is answered by tokenbroker-core itself."""
        self.signed_in()
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)
        [pid] = self.agents()
        other = os.path.join(self.tmp, "other.conf")
        with open(other, "w") as f:
            f.write(self.default_config().replace("[account work]", "[account elsewhere]"))
        for r in (self.run_broker("--config", other, "token", "get", "elsewhere"),
                  self.run_broker("token", "get", "elsewhere", env=self.env(TOKENBROKER_CONFIG=other))):
            self.assertEqual(r.returncode, 3, r.stderr)  # known there, not signed in: not "unknown account"
            self.assertIn(b"tokenbroker login elsewhere", r.stderr)
        self.assertEqual(self.agents(), [pid])


class SocketActivationTest(AgentTestCase):

    def test_systemd_socket_is_taken_over_and_left_in_place(self):
        """Under systemd the socket is fd 3 (LISTEN_FDS=1, LISTEN_PID = the agent): the agent
        serves it, and on `stop` leaves the socket file to systemd."""
        self.signed_in()
        directory = os.path.join(self.runtime, "tokenbroker")
        os.makedirs(directory, 0o700, exist_ok=True)  # as systemd's DirectoryMode=0700 makes it
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(self.socket)
        os.chmod(self.socket, 0o600)
        listener.listen(16)
        fd = listener.fileno()
        agent = subprocess.Popen(
            ["/bin/sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --verbose agent run 3<&%d %d<&-' % (fd, fd), CORE],
            pass_fds=(fd,), env=self.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(self._reap, agent)
        listener.close()
        token = self.run_broker("token", "get", "work")
        self.assertEqual(token.returncode, 0, token.stderr)
        self.assertEqual(self.agents(), [agent.pid])
        self.assertEqual(self.run_broker("agent", "stop").returncode, 0)
        agent.wait(timeout=30)
        self.assertEqual(agent.returncode, 0)
        self.assertTrue(os.path.exists(self.socket), "systemd's socket must stay")

    def test_units_are_shipped(self):
        units = os.path.join(ROOT, "contrib", "systemd")
        with open(os.path.join(units, "tokenbroker.socket")) as f:
            text = f.read()
        for line in ("ListenStream=%t/tokenbroker/agent.sock", "SocketMode=0600", "DirectoryMode=0700"):
            self.assertIn(line, text)
        with open(os.path.join(units, "tokenbroker.service")) as f:
            self.assertRegex(f.read(), r"(?m)^ExecStart=\S*tokenbroker-core agent run$")


class KilledAgentTest(AgentTestCase):

    def test_sigkill_during_a_refresh_loses_nothing(self):
        """The agent dies while the provider is slow to answer a refresh: the caller is served
        by the full program, the next call by a new agent, without a new login, and the stored
        refresh token still works."""
        self.signed_in()
        self.assertEqual(self.run_broker("token", "get", "work").returncode, 0)
        [pid] = self.agents()
        self.emu.add_fault("delay", "token", seconds=3, grant_type="refresh_token")
        p = subprocess.Popen([TOKENBROKER, "token", "get", "work", "--force-refresh"], env=self.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(self._reap, p)
        # The agent is now waiting for the delayed refresh (the emulator logs it on arrival).
        self.wait_until(lambda: self.refresh_requests(), what="the refresh to reach the emulator")
        os.kill(pid, signal.SIGKILL)
        r = self.finish(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
        after = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(after.returncode, 0, after.stderr)
        self.assertNotIn(pid, self.agents())
        self.assertEqual(len(self.agents()), 1)
        self.assertEqual(self.device_codes_requested(), 1)
        rt = self.stored_refresh_token()
        self.assertIn(rt, self.active_refresh_tokens())
        git = self.run_broker("get", input=GIT_GET)
        self.assertEqual(git.returncode, 0, git.stderr)


if __name__ == "__main__":
    unittest.main()
