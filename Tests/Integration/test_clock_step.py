"""A wall clock stepped back after a token was fetched (interface.md §2.1 `refresh-margin`: what
a token has left is its real remaining life): a token fetched while the clock ran an hour ahead
carries an expiry an hour too late, and must not be handed out once the clock is corrected.
"""
import time
import unittest

from clock_shim import ClockShim
from flows import FlowTestCase

LIFETIME = 4


class ClockStepTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1, "access_token_lifetime": LIFETIME}

    def test_Y01_a_token_fetched_before_the_clock_was_stepped_back_is_not_served(self):
        self.write_config(self.default_config(extra_broker="agent = off"))
        self.assertEqual(self.login_and_approve().returncode, 0)
        shim = ClockShim(self.tmp)
        shim.step(3600)
        ahead = self.run_broker("token", "get", "work", "--force-refresh", env=self.env(**shim.env()))
        self.assertEqual(ahead.returncode, 0, ahead.stderr)
        first = ahead.stdout.decode().strip()
        shim.step(0)  # NTP corrects the clock
        deadline = time.time() + 30
        while self.emu.validate_access_token(first) and time.time() < deadline:
            time.sleep(0.1)
        self.assertIsNone(self.emu.validate_access_token(first), "the first token never expired")
        r = self.run_broker("token", "get", "work", env=self.env(**shim.env()))
        self.assertEqual(r.returncode, 0, r.stderr)
        token = r.stdout.decode().strip()
        self.assertNotEqual(token, first, "handed out a token dead at the provider")
        self.assertTrue(self.emu.validate_access_token(token))


if __name__ == "__main__":
    unittest.main()
