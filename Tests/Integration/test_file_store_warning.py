"""The opt-in plaintext store (`store = file`) warns on every write, once per line, with one
`tokenbroker: warning: ` prefix, never two (`tokenbroker: tokenbroker: warning: …`).
"""
import unittest

from flows import FlowTestCase


class FileStoreWarningTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1}
    keyring = False

    def test_the_plaintext_warning_has_one_prefix(self):
        self.write_config(self.default_config(extra_broker="store = file\nagent = off"))
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        warnings = [l for l in r.stderr.decode().splitlines() if "plaintext" in l]
        self.assertTrue(warnings, r.stderr)
        for line in warnings:
            self.assertTrue(line.startswith("tokenbroker: warning: storing tokens in plaintext at "), line)
            self.assertNotIn("tokenbroker: tokenbroker:", line)


if __name__ == "__main__":
    unittest.main()
