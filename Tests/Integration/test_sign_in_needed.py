"""When a sign-in dies under background callers (interface.md §8.1, §4 `quit=1`): the provider
emulator kills the grant, and every non-interactive caller is answered at once with one line that
says so; git's helper also answers `quit=1`, so real git neither prompts (its askpass, a password
dialog per fetch in an IDE) nor asks the next helper; no browser is ever opened by such a call.
The account's state is kept in the runtime directory and shown by `status --json`.
"""
import json
import subprocess
import time
import unittest

from agent_flows import GIT_GET
from dead_grant import ANSWER_BOUND, LINE_START, DeadGrantTestCase

CALLERS = 20


class SignInNeededTest(DeadGrantTestCase):

    def test_twenty_background_git_fills_quit_at_once_and_never_prompt(self):
        results = self.run_callers(["git", "credential", "fill"], CALLERS, input=GIT_GET.encode())
        slowest = max(seconds for _, seconds in results)
        for r, seconds in results:
            self.assertLess(seconds, ANSWER_BOUND, r.stderr)
            # git stops at quit=1 ("told us to quit") with tokenbroker's one line before it.
            self.assertEqual(r.returncode, 128, r.stderr)
            self.assertEqual(r.stdout, b"")
            lines = r.stderr.decode().splitlines()
            self.assertEqual(len(lines), 2, lines)
            self.assertTrue(lines[0].startswith(LINE_START), lines)
            self.assertTrue(lines[0].endswith("; run 'tokenbroker login work'"), lines)
            self.assertIn("told us to quit", lines[1])
        self.assertEqual(self.launched(), [], "no askpass and no browser")
        # One refresh met the dead grant; nothing else was sent, and no sign-in was started.
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assertEqual(self.device_codes_requested(), self.device_codes)
        self.assertIsNone(self.stored_refresh_token())
        account = self.status()
        self.assertEqual((account["state"], account["state_reason"]), ("sign-in-needed", "rejected"))
        self.assertLessEqual(abs(account["state_since"] - time.time()), 120)
        self.assert_no_secret_leak(*(r for r, _ in results))
        print("\n%d git fills answered, the slowest in %.2f s" % (CALLERS, slowest))

    def test_token_get_and_docker_are_answered_with_the_same_line(self):
        """The first caller meets the dead grant; the later ones are answered from the recorded
        state (with the time it died), by the agent and without it alike."""
        first = self.run_broker("token", "get", "work", env=self.caller_env())
        self.assertEqual((first.returncode, first.stdout), (3, b""), first.stderr)
        self.assertTrue(first.stderr.decode().startswith(LINE_START), first.stderr)
        for env in (self.caller_env(), self.caller_env(TOKENBROKER_CONFIG=self.config_path)):
            r = self.run_broker("token", "get", "work", env=env)
            self.assertEqual((r.returncode, r.stdout), (3, b""), r.stderr)
            line, = r.stderr.decode().splitlines()
            self.assertRegex(line, r"^%s.*\) at \d\d:\d\d; run 'tokenbroker login work'$" % LINE_START.replace("(", r"\("))
            docker = self.run_broker("get", input=b"https://git.example.test\n", env=env,
                                     argv0="docker-credential-tokenbroker")
            self.assertEqual(docker.returncode, 3, docker.stderr)
            self.assertTrue(docker.stdout.decode().startswith("credentials not found in native keychain (tokenbroker: "
                                                              "sign-in needed for 'work'"), docker.stdout)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assertEqual(self.launched(), [])

    def test_token_get_wait_that_runs_out_exits_3(self):
        r = self.run_broker("token", "get", "work", "--wait", "1", env=self.caller_env())
        self.assertEqual((r.returncode, r.stdout), (3, b""), r.stderr)
        first, last = r.stderr.decode().splitlines()
        self.assertTrue(first.startswith(LINE_START) and first.endswith("; waiting up to 1 s (--wait) for the sign-in"), first)
        self.assertTrue(last.startswith(LINE_START), last)

    def test_logout_is_signed_out_and_login_signs_in(self):
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 3, r.stderr)
        r = self.run_broker("logout", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        account = self.status()
        self.assertEqual((account["state"], account["state_reason"]), ("signed-out", None))
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.stderr, b"tokenbroker: 'work' is not signed in; run 'tokenbroker login work'\n")
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_broker("status", "work", "--json")
        self.assertEqual(json.loads(r.stdout)["accounts"][0]["state"], "signed-in")
        fill = subprocess.run(["git", "credential", "fill"], input=GIT_GET.encode(), capture_output=True,
                              env=self.caller_env(), timeout=60, start_new_session=True)
        self.assertEqual(fill.returncode, 0, fill.stderr)
        self.assertIn(b"password=", fill.stdout)


if __name__ == "__main__":
    unittest.main()
