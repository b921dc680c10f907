"""A refresh that fails inside `refresh-margin` for any reason but a dead grant hands out the
cached access token while it is still valid, with a `--verbose` line (interface.md §6): a 503, a
dropped connection or the provider's throttle in the token's last minutes never turns a working
token into exit 4. A dead grant is still reported, and nothing is handed out after it.

Access tokens live 14 s here under `refresh-margin = 10`: the margin is capped at half the
lifetime (7 s), so a token is inside it after 7 s and still valid for 7 s more.
"""
import json
import time
import unittest

from flows import FlowTestCase

LIFETIME = 14


class RefreshFallbackTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1, "access_token_lifetime": LIFETIME}

    def config(self, agent):
        return self.default_config(extra_broker="agent = %s" % agent).replace(
            "refresh-margin = 300", "refresh-margin = 10")

    def inside_the_margin(self, agent):
        """Signs in, waits until the cached token is inside the margin; returns (token, expiry)."""
        self.write_config(self.config(agent))
        self.kill_agent()
        self.assertEqual(self.login_and_approve().returncode, 0)
        first = self.run_broker("token", "get", "work", "--format", "json")
        self.assertEqual(first.returncode, 0, first.stderr)
        doc = json.loads(first.stdout)
        # Inside the margin: less than LIFETIME / 2 left, still a few seconds to go.
        while doc["expires_on"] - time.time() > LIFETIME / 2 - 1:
            time.sleep(0.1)
        return doc["access_token"], doc["expires_on"]

    def test_Y04_a_failed_refresh_inside_the_margin_hands_out_the_cached_token(self):
        for agent in ("auto", "off"):
            token, expires_on = self.inside_the_margin(agent)
            # The throttle last: its hold keeps every later refresh of the account back.
            for fault in ({"kind": "status", "status": 503}, {"kind": "drop"}, {"kind": "request_loop"}):
                with self.subTest(agent=agent, fault=fault["kind"]):
                    self.emu.clear_faults()
                    before = len(self.refresh_requests())
                    self.emu.add_fault(endpoint="token", grant_type="refresh_token", count=3, **fault)
                    r = self.run_broker("token", "get", "work", "--verbose", timeout=30)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertEqual(r.stdout.decode().strip(), token)
                    self.assertLess(time.time(), expires_on)
                    self.assertTrue(self.emu.validate_access_token(token), "handed out a token dead at the emulator")
                    self.assertIn(b"handing out the cached token, still valid for", r.stderr)
                    # One short try, not three with back-off, while a valid token exists.
                    self.assertEqual(len(self.refresh_requests()) - before, 1)
                    self.assert_no_secret_leak(r)
            # A call during the throttle's hold sends nothing and is served all the same.
            before = len(self.refresh_requests())
            held = self.run_broker("token", "get", "work")
            self.assertEqual((held.returncode, held.stdout.decode().strip()), (0, token), held.stderr)
            self.assertEqual(len(self.refresh_requests()), before)

    def test_Y04_a_dead_grant_inside_the_margin_is_reported(self):
        token, _ = self.inside_the_margin("off")
        self.emu.revoke(self.stored_refresh_token())
        r = self.run_broker("token", "get", "work")
        self.assertEqual((r.returncode, r.stdout), (3, b""), r.stderr)
        self.assertIsNone(self.stored_refresh_token())
        self.assertNotIn(token.encode(), r.stderr)


if __name__ == "__main__":
    unittest.main()
