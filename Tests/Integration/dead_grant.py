"""The set-up of the tests of a sign-in that dies under background callers (interface.md §8.1):
a signed-in account whose grant the provider emulator has killed, background callers with a
display, a browser and git's askpass that only log (none may ever run), many callers at once.
"""
import json
import os
import stat
import subprocess
import time

from agent_flows import AgentTestCase
from harness import TOKENBROKER

# A "does not hang" bound per caller, generous: make check runs four test files at once on 2 cores.
ANSWER_BOUND = 30
LINE_START = "tokenbroker: sign-in needed for 'work': the refresh token was rejected (invalid_grant"


class DeadGrantTestCase(AgentTestCase):
    """An agent test whose account's grant the emulator killed after its access token expired."""
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        # A browser and an askpass that only log: neither may ever run.
        self.launches = os.path.join(self.tmp, "launches.log")
        self.browser = self.logging_program("browser", "echo browser \"$@\" >> '%s'" % self.launches)
        self.askpass = self.logging_program("askpass", "echo askpass \"$1\" >> '%s'; echo guessed" % self.launches)
        self.gitconfig = os.path.join(self.tmp, "gitconfig")
        subprocess.run(["git", "config", "--file", self.gitconfig, "--add", "credential.helper", ""], check=True)
        subprocess.run(["git", "config", "--file", self.gitconfig, "--add", "credential.helper", TOKENBROKER],
                       check=True)
        self.rt = self.signed_in_with_expired_token()
        self.assertEqual(self.emu.revoke(self.rt), 1)
        self.device_codes = self.device_codes_requested()

    def logging_program(self, name, line):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n%s\n" % line)
        os.chmod(path, stat.S_IRWXU)
        return path

    def caller_env(self, **overrides):
        """A background caller's environment: a display and a browser it could open, git's askpass,
        no terminal prompt."""
        return self.env(DISPLAY=":99", BROWSER=self.browser, TOKENBROKER_BROWSER=self.browser,
                        GIT_CONFIG_GLOBAL=self.gitconfig, GIT_CONFIG_NOSYSTEM="1", GIT_ASKPASS=self.askpass,
                        SSH_ASKPASS=None, GIT_TERMINAL_PROMPT="0", **overrides)

    def launched(self):
        try:
            with open(self.launches) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def run_callers(self, argv, count, input=b"", env=None):
        """Starts `count` copies of `argv` at once, each in a session of its own (no terminal), and
        returns [(CompletedProcess, seconds until it ended)]."""
        procs = []
        for _ in range(count):
            started = time.monotonic()
            p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=env or self.caller_env(), cwd=self.tmp, start_new_session=True)
            procs.append((p, started))
        for p, _ in procs:
            try:
                p.stdin.write(input)
                p.stdin.close()
            except BrokenPipeError:
                pass
            p.stdin = None  # closed: communicate() only reads
        results = []
        for p, started in procs:
            try:
                out, err = p.communicate(timeout=max(1, started + ANSWER_BOUND + 30 - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            results.append((subprocess.CompletedProcess(p.args, p.returncode, out, err), time.monotonic() - started))
        return results

    def status(self):
        r = self.run_broker("status", "work", "--json")
        self.assertEqual(r.returncode, 3, r.stderr)
        return json.loads(r.stdout)["accounts"][0]

