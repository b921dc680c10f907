"""Refresh-token lifetimes the provider states (interface.md §3 `status`): a Google client whose
OAuth consent screen is in "Testing" status gets refresh tokens of 7 days, and says so in
`refresh_token_expires_in`. `login` warns and names the fix, `status` shows the expiry, and the
exit-3 line after it says the provider's time limit was reached, not that the token was revoked.
"""
import json
import time
import unittest

from test_google import GoogleTestCase

WEEK = 604799


class RefreshTokenLifetimeTest(GoogleTestCase):
    def test_Y09_a_testing_apps_seven_days_are_warned_about_shown_and_named_when_they_end(self):
        self.emu.configure(refresh_token_lifetime=WEEK, announce_refresh_token_lifetime=True)
        r, _ = self.device_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        warning = [line for line in r.stderr.decode().splitlines() if "ends in" in line]
        self.assertEqual(len(warning), 1, r.stderr)
        self.assertIn("the sign-in of 'g' ends in 6 days 23 h", warning[0])
        self.assertIn("'Testing' publishing status", warning[0])
        self.assertIn("'In production'", warning[0])
        status = self.run_broker("status", "g", "--json")
        self.assertEqual(status.returncode, 0, status.stderr)
        [account] = json.loads(status.stdout)["accounts"]
        # Counted from when the request was sent, in whole seconds: a little less than WEEK after
        # the sign-in was stored, never more.
        self.assertLessEqual(account["refresh_token_expires_on"] - account["refresh_token_obtained_at"], WEEK)
        self.assertGreater(account["refresh_token_expires_on"] - account["refresh_token_obtained_at"], WEEK - 10)
        text = self.run_broker("status", "g").stdout.decode()
        self.assertIn("the provider says it expires ", text)

        # A lifetime that runs out: the refusal after it names the time limit.
        self.emu.configure(refresh_token_lifetime=2)
        self.assertEqual(self.run_broker("logout", "g").returncode, 0)
        r, _ = self.device_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLessEqual(self.record()["expires_on"], time.time() + 2)
        granted = self.emu.store.refresh_tokens[self.stored_refresh_token("g")]
        while self.emu.store.now() < granted.expires:  # dead at the provider
            time.sleep(0.05)
        dead = self.run_broker("token", "get", "g", "--force-refresh")
        self.assertEqual((dead.returncode, dead.stdout), (3, b""), dead.stderr)
        self.assertIn(b"reached the time limit", dead.stderr)
        self.assertIn(b"tokenbroker login g", dead.stderr)
        self.assertIsNone(self.stored_refresh_token("g"))

    def test_Y09_no_warning_without_a_stated_lifetime(self):
        r, _ = self.device_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"ends in", r.stderr)
        [account] = json.loads(self.run_broker("status", "g", "--json").stdout)["accounts"]
        self.assertIsNone(account["refresh_token_expires_on"])


if __name__ == "__main__":
    unittest.main()
