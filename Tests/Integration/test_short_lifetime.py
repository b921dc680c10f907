"""A provider whose access tokens live shorter than `refresh-margin` (interface.md §2.1
`refresh-margin`): the margin is capped at half the token's lifetime, so a token is not
refreshed on every call, and the user is told once per sign-in (and scope set) why tokens are
refreshed sooner than the margin says."""
import unittest

from harness import BrokerTestCase

OTHER_SCOPE = "https://graph.microsoft.com/Mail.Read"


class ShortLifetimeTest(BrokerTestCase):
    # 200 s tokens, 300 s margin (the harness's config): the case of the issue.
    emulator_options = {"device_code_interval": 1, "access_token_lifetime": 200}

    def refreshes(self):
        return len(self.emu.requests(grant_type="refresh_token"))

    def check(self, agent):
        self.write_config(self.default_config(extra_broker="agent = " + agent))
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)
        warning = [line for line in err.decode().splitlines() if "refresh-margin" in line]
        self.assertEqual(len(warning), 1, err)
        self.assertIn("200 s", warning[0])
        self.assertIn("300 s", warning[0])
        before = self.refreshes()
        tokens = set()
        for _ in range(4):
            r = self.run_broker("token", "get", "work")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, b"")  # warned once, at the sign-in
            tokens.add(r.stdout)
        self.assertEqual(self.refreshes(), before)
        self.assertEqual(len(tokens), 1)
        # Another scope set: its first token refreshes and warns; the next ones are quiet and cached.
        first = self.run_broker("token", "get", "work", "--scope", OTHER_SCOPE)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn(b"refresh-margin", first.stderr)
        for _ in range(2):
            again = self.run_broker("token", "get", "work", "--scope", OTHER_SCOPE)
            self.assertEqual((again.returncode, again.stderr, again.stdout), (0, b"", first.stdout))
        self.assertEqual(self.refreshes(), before + 1)
        # --min-valid beyond the capped margin still refreshes (and the token is handed out).
        longer = self.run_broker("token", "get", "work", "--min-valid", "250")
        self.assertEqual(longer.returncode, 0, longer.stderr)
        self.assertEqual(self.refreshes(), before + 2)

    def test_without_agent(self):
        self.check("off")

    def test_through_the_agent(self):
        self.check("auto")


if __name__ == "__main__":
    unittest.main()
