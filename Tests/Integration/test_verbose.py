"""`--verbose` and `TOKENBROKER_VERBOSE=1` (interface.md §2 and §3): one line
each on stderr, starting `tokenbroker: `, saying which config files were read, how the host or
account was resolved, whether the agent served the call, cache hit or miss with the remaining
lifetime, each HTTP request (method, endpoint, status, duration), each store operation and its
duration, and why a refresh or a deletion happened; through the agent as well. Never a secret,
not even a prefix of one.
"""
import os
import re
import subprocess
import unittest

from agent_flows import AgentTestCase
from harness import TOKENBROKER

HTTP_LINE = re.compile(r"^tokenbroker: HTTP POST https://127\.0\.0\.1:\d+/contoso\.example/oauth2/v2\.0/token: 200 in \d+ ms$")
STORE_LINE = re.compile(r"^tokenbroker: store: (read|write|delete|list) .* in \d+ ms$")


class VerboseTest(AgentTestCase):

    def lines(self, r):
        text = r.stderr.decode()
        lines = text.splitlines()
        for line in lines:
            self.assertTrue(line.startswith("tokenbroker: "), text)
        return lines

    def assert_line(self, lines, pattern):
        regex = re.compile(pattern)
        self.assertTrue(any(regex.search(line) for line in lines), "no line matches %r in:\n%s" % (pattern, "\n".join(lines)))

    def assert_no_secret_or_prefix(self, *results):
        self.assert_no_secret_leak(*results)
        prefixes = {s[:10] for s in self.known_secrets() if len(s) >= 10}
        for r in results:
            for p in prefixes:
                self.assertNotIn(p.encode(), r.stderr)

    def test_direct_calls_say_what_happened(self):
        self.write_agent_config(extra_broker="agent = off")
        self.signed_in()
        hit = self.run_broker("token", "get", "work", "--verbose")
        self.assertEqual(hit.returncode, 0, hit.stderr)
        lines = self.lines(hit)
        self.assert_line(lines, r"read config %s$" % re.escape(self.config_path))
        self.assert_line(lines, r"no config at /etc/tokenbroker/config$")
        self.assert_line(lines, r"the agent did not serve this call: no agent runs, and agent = off")
        self.assert_line(lines, r"tokenbroker-core serves this call itself, not the agent$")
        self.assert_line(lines, r"cache hit for 'work' \[https://graph\.microsoft\.com/User\.Read\]: \d+ s left \(300 s needed\)")
        self.assertTrue(any(STORE_LINE.match(line) for line in lines), lines)
        self.assertFalse(any(HTTP_LINE.match(line) for line in lines), lines)

        forced = self.run_broker("token", "get", "work", "--force-refresh", "--verbose")
        self.assertEqual(forced.returncode, 0, forced.stderr)
        lines = self.lines(forced)
        self.assert_line(lines, r"refreshing 'work' .*: --force-refresh$")
        self.assert_line(lines, r"took the refresh lock of 'work' after \d+ ms$")
        self.assertTrue(any(HTTP_LINE.match(line) for line in lines), lines)
        self.assert_line(lines, r"storing the rotated refresh token of 'work'$")
        self.assert_line(lines, r"store: write work/refresh-token: done in \d+ ms$")
        self.assert_line(lines, r"refreshed 'work' .*: the new token is valid for \d+ s$")

        quiet = self.run_broker("token", "get", "work")
        self.assertEqual(quiet.stderr, b"")

        # Why a deletion happened: the grant was revoked at the provider.
        self.emu.revoke(self.stored_refresh_token())
        revoked = self.run_broker("token", "get", "work", "--force-refresh", env=self.env(TOKENBROKER_VERBOSE="1"))
        self.assertEqual(revoked.returncode, 3, revoked.stderr)
        lines = self.lines(revoked)
        self.assert_line(lines, r"deleting the refresh token of 'work' .*rejected that very token")
        self.assert_line(lines, r"store: delete work/refresh-token: done in \d+ ms$")
        self.assert_no_secret_or_prefix(hit, forced, revoked)

    def test_helpers_started_by_git_and_docker_through_the_agent(self):
        self.signed_in()
        env = self.env(TOKENBROKER_VERBOSE="1", GIT_TERMINAL_PROMPT="0")
        git = ["git", "-c", "credential.helper=", "-c", "credential.helper=" + TOKENBROKER, "credential", "fill"]
        first = subprocess.run(git, input=b"protocol=https\nhost=git.example.test\n\n", capture_output=True, env=env, timeout=60)
        self.assertEqual(first.returncode, 0, first.stderr)
        lines = self.lines(first)
        self.assert_line(lines, r"the agent serves this call$")
        self.assert_line(lines, r"'git\.example\.test' is served by account 'work' \(hosts = git\.example\.test of \[account work\]\)$")
        self.assert_line(lines, r"read config ")
        self.assertEqual(len(self.agents()), 1)
        second = subprocess.run(git, input=b"protocol=https\nhost=git.example.test\n\n", capture_output=True, env=env, timeout=60)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assert_line(self.lines(second), r"the agent's memory had the token of 'work' .*: \d+ s left$")
        # The agent was started by a verbose call; a quiet caller still gets a quiet answer.
        quiet = self.run_broker("get", input="protocol=https\nhost=git.example.test\n\n")
        self.assertEqual(quiet.returncode, 0, quiet.stderr)
        self.assertEqual(quiet.stderr, b"")

        docker = self.run_broker("get", input="https://git.example.test\n", argv0="docker-credential-tokenbroker",
                                 env=env)
        self.assertEqual(docker.returncode, 0, docker.stderr)
        self.assert_line(self.lines(docker), r"'git\.example\.test' is served by account 'work'")
        self.assert_no_secret_or_prefix(first, second, docker)

    def test_every_command_reports_its_config_and_store(self):
        login = self.login_and_approve("work", "--verbose")
        self.assertEqual(login.returncode, 0, login.stderr)
        login_lines = self.message_lines(login.stderr)
        self.assert_line(login_lines, r"HTTP POST https://127\.0\.0\.1:\d+/contoso\.example/oauth2/v2\.0/devicecode: 200 in \d+ ms$")
        self.assert_line(login_lines, r"store: write work/refresh-token: done in \d+ ms$")
        for args, store in ((("accounts",), r"store: read work/refresh-token: found in \d+ ms$"),
                            (("logout", "work"), r"store: list items of work: \d+ in \d+ ms$")):
            r = self.run_broker(*args, "--verbose")
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = self.lines(r)
            self.assert_line(lines, r"read config ")
            self.assert_line(lines, store)
        self.assert_no_secret_or_prefix(login)



if __name__ == "__main__":
    unittest.main()
