"""The main job once, end to end: device-code login, token get, git get, logout."""
import unittest

from harness import BrokerTestCase


class SmokeTest(BrokerTestCase):
    emulator_options = {"device_code_interval": 1}

    def test_login_token_get_git_get_logout(self):
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)
        self.assertIn(b"signed in to work as user1@example.test", out)
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        token = r.stdout.decode().strip()
        self.assertTrue(self.emu.validate_access_token(token))
        g = self.run_broker("get", input="protocol=https\nhost=git.example.test\n\n")
        self.assertEqual(g.returncode, 0, g.stderr)
        self.assertIn(b"password=" + token.encode() + b"\n", g.stdout)
        r = self.run_broker("logout", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.keyring_items(), [])


if __name__ == "__main__":
    unittest.main()
