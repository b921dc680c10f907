"""Helpers for the resident-agent tests (test_agent*.py), on top of flows.FlowTestCase: many
concurrent calls, the agent's process, its socket and lock, and the refresh tokens the emulator
issued.
"""
import json
import os
import subprocess
import time

from flows import GIT_GET, FlowTestCase
from harness import TOKENBROKER

CORE = os.path.join(os.path.dirname(TOKENBROKER), "tokenbroker-core")


class AgentTestCase(FlowTestCase):
    emulator_options = {"device_code_interval": 1}

    @property
    def socket(self):
        return os.path.join(self.runtime, "tokenbroker", "agent.sock")

    def setUp(self):
        super().setUp()
        self._agents_before = set(self._agent_processes())

    @staticmethod
    def _agent_processes():
        """{pid: environ bytes or None (unreadable)} of every live `tokenbroker-core agent run`."""
        found = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                if not argv[0].endswith(b"tokenbroker-core") or b"agent" not in argv or b"run" not in argv:
                    continue
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().split(")")[-1].split()[0] == "Z":
                        continue
                try:
                    with open(f"/proc/{entry}/environ", "rb") as f:
                        found[int(entry)] = f.read()
                except PermissionError:  # not root: the agent is not dumpable, so its environ is private
                    found[int(entry)] = None
            except OSError:
                continue
        return found

    def agents(self, runtime=None):
        """Pids of every live agent of this test: its XDG_RUNTIME_DIR is the test's (when the
        environment is readable, i.e. as root), else any agent that started during the test."""
        marker = ("XDG_RUNTIME_DIR=" + (runtime or self.runtime)).encode() + b"\0"
        return sorted(pid for pid, environ in self._agent_processes().items()
                      if (marker in environ if environ is not None else pid not in self._agents_before))

    def wait_until(self, predicate, timeout=15, what="the condition"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.02)
        raise AssertionError(f"{what} did not hold within {timeout} s")

    def run_many(self, argvs, inputs=None, env=None, timeout=120, argv0s=None):
        """Starts every argv at once (each a tokenbroker call, or under the name `argv0s[i]`),
        feeds each its input, and returns their CompletedProcess results in order."""
        exes = []
        for i in range(len(argvs)):
            name = argv0s[i] if argv0s else None
            exe = TOKENBROKER
            if name:
                exe = os.path.join(self.tmp, name)
                if not os.path.exists(exe):
                    os.symlink(TOKENBROKER, exe)
            exes.append(exe)
        procs = []
        for i, args in enumerate(argvs):
            p = subprocess.Popen([exes[i]] + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env or self.env())
            data = inputs[i] if inputs else b""
            if isinstance(data, str):
                data = data.encode()
            try:
                p.stdin.write(data)
                p.stdin.close()
            except BrokenPipeError:
                pass
            procs.append(p)
        results = []
        deadline = time.time() + timeout
        for p in procs:
            out = p.stdout.read()
            err = p.stderr.read()
            p.wait(max(1, deadline - time.time()))
            p.stdout.close()
            p.stderr.close()
            results.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
        return results

    @staticmethod
    def git_password(result):
        fields = dict(line.split("=", 1) for line in result.stdout.decode().splitlines())
        return fields["password"]

    def active_refresh_tokens(self):
        return [t["token"] for t in self.emu.state()["refresh_tokens"] if t["state"] == "active"]

    def invalid_grants(self):
        return [r for r in self.emu.requests(endpoint="token")
                if isinstance(r.get("response"), dict) and r["response"].get("error") == "invalid_grant"]

    def write_agent_config(self, extra_broker="", extra=""):
        self.write_config(self.default_config(extra_broker=extra_broker) + extra)

    def config_json(self):
        return json.dumps(self.emu.state()["options"])


__all__ = ["AgentTestCase", "CORE", "GIT_GET"]
