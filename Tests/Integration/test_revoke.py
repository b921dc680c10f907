"""`tokenbroker revoke ACCOUNT` (interface.md §3, §6; RFC 7009) and bug-cases.md B21: sign-out
leaves nothing in the store, and `revoke` also ends the grant at the provider where it can.
"""
import json
import unittest

from flows import GIT_GET, BrowserFlows, FlowTestCase

GOOGLE_GRANTS = "https://myaccount.google.com/permissions"


class RevokeTestCase(BrowserFlows, FlowTestCase):
    emulator_options = {"auto_consent": True, "device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config() + self.google_config())

    def google_signed_in(self):
        r, _ = self.browser_login("g")
        self.assertEqual(r.returncode, 0, r.stderr)
        [item] = self.items_of_kind("refresh-token", "g")
        t = self.run_broker("token", "get", "g")
        self.assertEqual(t.returncode, 0, t.stderr)
        return json.loads(item["secret"])["refresh_token"], t.stdout.decode().strip()

    def emu_host(self):
        return self.emu.base_url.split("://", 1)[1].rstrip("/")

    def revocations(self):
        return self.emu.requests(endpoint="google.revoke")

    def assert_signed_out(self, account):
        self.assertEqual(self.keyring_items(account), [])
        self.assertEqual(self.bus.secret_tool("search", "--all", "application", "tokenbroker", "account", account).stdout,
                         "")
        t = self.run_broker("token", "get", account)
        self.assertEqual(t.returncode, 3, t.stderr)
        self.assertIn(("tokenbroker login %s" % account).encode(), t.stderr)


class GoogleRevokeTest(RevokeTestCase):

    def test_revoke_ends_the_grant_and_signs_out(self):
        """B21: `revoke` posts the refresh token to the revocation endpoint (form body, never the
        URL), the grant dies at the provider (its access token too), and nothing is left locally:
        `token get` exits 3."""
        rt, at = self.google_signed_in()
        r = self.run_broker("revoke", "g")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"")
        # The endpoint's configured host names the provider (here the emulator), never "google".
        self.assertEqual(r.stderr, ("tokenbroker: revoked at %s; signed out locally\n" % self.emu_host()).encode())
        [call] = self.revocations()
        self.assertEqual(call["method"], "POST")
        self.assertEqual(call["query"], {})
        self.assertEqual(call["form"], {"token": rt})
        self.assertEqual(call["status"], 200)
        self.assertFalse(self.emu.validate_access_token(at))
        self.assert_signed_out("g")
        self.assert_no_secret_leak(r)

    def test_without_libcurl_nothing_is_revoked_nor_signed_out(self):
        """No request can be made (libcurl missing): `revoke` says the loader's one line (exit 4),
        as every flow does, and signs nothing out, so it can be run again once libcurl4 is in."""
        self.google_signed_in()
        self.run_broker("agent", "stop")
        items = self.keyring_items("g")
        r = self.run_broker("revoke", "g", env=self.env_without_libcurl())
        self.assert_libcurl_missing(r)
        self.assertEqual(self.revocations(), [])
        self.assertEqual(self.keyring_items("g"), items)
        self.assertEqual(self.run_broker("revoke", "g").returncode, 0)
        self.assert_signed_out("g")

    def test_failed_revocation_still_signs_out_and_exits_4(self):
        """B21 variant: the revocation endpoint answers 503 (after retries): exit 4, signed out
        locally all the same, and the message says the grant may remain and where to remove it."""
        rt, _ = self.google_signed_in()
        self.emu.add_fault("status", "google.revoke", count=5, status=503)
        r = self.run_broker("revoke", "g")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("503", lines[0])
        self.assertIn("signed out locally", lines[0])
        self.assertIn("may remain", lines[0])
        # Not Google's page: the endpoint is another server, and the message names that one.
        self.assertNotIn(GOOGLE_GRANTS, lines[0])
        self.assertIn(self.emu_host(), lines[0])
        self.assertEqual(len(self.revocations()), 3)
        self.assert_signed_out("g")
        self.assert_no_secret_leak(r)

    def test_unreachable_revocation_endpoint_still_signs_out(self):
        """B21 variant: nothing listens at the revocation endpoint: exit 4, signed out locally."""
        self.write_config(self.default_config() + self.google_config().replace(
            "revocation-endpoint = %s/google/revoke" % self.emu.base_url,
            "revocation-endpoint = https://127.0.0.1:9/revoke"))
        self.google_signed_in()
        r = self.run_broker("revoke", "g")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn(b"may remain", r.stderr)
        self.assert_signed_out("g")

    def test_already_revoked_grant(self):
        """The provider no longer knows the token (Google answers 400 invalid_token): nothing is
        left to revoke; signed out locally, exit 0."""
        rt, _ = self.google_signed_in()
        self.emu.store.revoke_grant(rt)  # as if revoked at myaccount.google.com: tokens all dead
        r = self.run_broker("revoke", "g")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"already revoked or expired", r.stderr)
        self.assert_signed_out("g")

    def test_logout_removes_everything_but_keeps_the_grant(self):
        """B21 first part: `logout` deletes every item (secret-tool finds nothing, git `get` prints
        no password), sends nothing to the provider, and the grant stays there."""
        rt, _ = self.google_signed_in()
        r = self.run_broker("logout", "g")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_signed_out("g")
        g = self.run_broker("get", input="protocol=https\nhost=europe-west1-docker.pkg.dev\n\n")
        self.assertNotIn(b"password=", g.stdout)
        self.assertEqual(self.revocations(), [])
        [grant] = [t for t in self.emu.state()["refresh_tokens"] if t["token"] == rt]
        self.assertNotEqual(grant["state"], "revoked")

    def test_revoke_when_not_signed_in(self):
        r = self.run_broker("revoke", "g")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"was not signed in", r.stderr)
        self.assertEqual(self.revocations(), [])

    def test_locked_keyring_revokes_nothing_and_deletes_nothing(self):
        """A locked keyring: exit 5 "locked" before any provider request; the items stay."""
        self.google_signed_in()
        self.bus.lock_login_collection()
        r = self.run_broker("revoke", "g")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn(b"locked", r.stderr)
        self.assertEqual(self.revocations(), [])
        self.bus.unlock_login_collection()
        self.assertEqual(len(self.items_of_kind("refresh-token", "g")), 1)


class AzureRevokeTest(RevokeTestCase):

    def test_azure_has_no_revocation_endpoint_and_signs_out(self):
        """B21: Azure AD has no RFC 7009 endpoint: `revoke` says so, signs out locally, exit 0,
        and sends nothing to the provider."""
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        before = len(self.emu.requests())
        v = self.run_broker("revoke", "work")
        self.assertEqual(v.returncode, 0, v.stderr)
        self.assertEqual(v.stderr, b"tokenbroker: azure has no revocation endpoint; signed out locally\n")
        self.assertEqual(len(self.emu.requests()), before)
        self.assert_signed_out("work")
        g = self.run_broker("get", input=GIT_GET)
        self.assertNotIn(b"password=", g.stdout)


if __name__ == "__main__":
    unittest.main()
