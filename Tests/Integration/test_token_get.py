"""`tokenbroker token get` after a device-code login: the cached token, output formats, scopes,
`--min-valid`, `--force-refresh`, silent refresh with rotation, and the refresh margin.

Bug cases (bug-cases.md): B08/B11 (rotated or omitted refresh tokens), B14 (a token
inside the refresh margin is never handed out), B29 (no secret in any message).
"""
import datetime
import json
import time
import unittest

from flows import GIT_GET, FlowTestCase

USER_READ = "https://graph.microsoft.com/User.Read"
MAIL_READ = "https://graph.microsoft.com/Mail.Read"


class TokenGetCacheTest(FlowTestCase):
    """Tokens live an hour: everything within it comes from the keyring."""
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.rt = self.signed_in()
        self.login_token = self.cached_access_tokens()[USER_READ]

    def token_get(self, *args):
        r = self.run_broker("token", "get", "work", *args, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def test_second_call_is_served_from_the_keyring(self):
        """interface.md §3: a valid cached token is handed out without any token request."""
        before = len(self.emu.requests(endpoint="token"))
        first = self.token_get()
        second = self.token_get()
        self.assertEqual(len(self.emu.requests(endpoint="token")), before)
        self.assertEqual(first.stdout, (self.login_token + "\n").encode())
        self.assertEqual(second.stdout, first.stdout)
        self.assertTrue(self.emu.validate_access_token(self.login_token))
        self.assert_no_secret_leak(first, second)

    def test_formats(self):
        """interface.md §3: token, header, json (fields; expires_on Unix seconds), env and
        exec-credential (RFC 3339 UTC expiry) all carry the same token and expiry."""
        token = self.login_token
        exp = self.emu.validate_access_token(token)["exp"]
        self.assertEqual(self.token_get("--format", "token").stdout, (token + "\n").encode())
        self.assertEqual(self.token_get("--format", "header").stdout,
                         ("Authorization: Bearer " + token + "\n").encode())
        doc = json.loads(self.token_get("--format", "json").stdout)
        self.assertEqual(set(doc), {"account", "provider", "token_type", "access_token", "expires_on", "scopes"})
        self.assertEqual((doc["account"], doc["provider"], doc["token_type"], doc["access_token"]),
                         ("work", "azure", "Bearer", token))
        self.assertIsInstance(doc["expires_on"], int)
        self.assertLessEqual(abs(doc["expires_on"] - exp), 5)
        self.assertEqual(doc["scopes"], [USER_READ])
        env = self.token_get("--format", "env").stdout.decode()
        self.assertEqual(env, "TOKENBROKER_ACCESS_TOKEN=%s\nTOKENBROKER_EXPIRES_ON=%d\n" % (token, doc["expires_on"]))
        cred = json.loads(self.token_get("--format", "exec-credential").stdout)
        self.assertEqual(cred["apiVersion"], "client.authentication.k8s.io/v1")
        self.assertEqual(cred["kind"], "ExecCredential")
        self.assertEqual(cred["status"]["token"], token)
        expected = datetime.datetime.fromtimestamp(doc["expires_on"], datetime.timezone.utc)
        self.assertEqual(cred["status"]["expirationTimestamp"], expected.strftime("%Y-%m-%dT%H:%M:%SZ"))
        self.assertEqual(self.refresh_requests(), [])
        bad = self.run_broker("token", "get", "work", "--format", "yaml", timeout=30)
        self.assertEqual(bad.returncode, 64)
        self.assertEqual(bad.stdout, b"")

    def test_scope_gets_a_separately_cached_token(self):
        """`--scope` asks for that scope set once, caches it under its own `scopes` attribute, and
        leaves the default scopes' token alone."""
        mail = self.token_get("--scope", MAIL_READ).stdout.decode().strip()
        self.assertNotEqual(mail, self.login_token)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assertIn(MAIL_READ, self.refresh_requests()[0]["form"]["scope"].split())
        self.assertIn("Mail.Read", self.emu.validate_access_token(mail)["scope"])
        self.assertEqual(self.cached_access_tokens(), {USER_READ: self.login_token, MAIL_READ: mail})
        self.assertEqual(self.token_get("--scope", MAIL_READ).stdout.decode().strip(), mail)
        self.assertEqual(self.token_get().stdout.decode().strip(), self.login_token)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assert_no_secret_leak()

    def test_min_valid_beyond_the_remaining_lifetime_forces_a_refresh(self):
        """`--min-valid` longer than the cached token's remaining life refreshes (the provider
        sets the lifetime, so the fresh token is returned even if it is shorter)."""
        r = self.token_get("--min-valid", "7200")
        new = r.stdout.decode().strip()
        self.assertNotEqual(new, self.login_token)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assertEqual(self.refresh_requests()[0]["form"]["refresh_token"], self.rt)
        self.assertTrue(self.emu.validate_access_token(new))
        self.assertEqual(self.token_get("--min-valid", "600").stdout.decode().strip(), new)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assert_no_secret_leak(r)

    def test_force_refresh_refreshes(self):
        """`--force-refresh` skips the cache: a new token, and the rotated refresh token is stored."""
        r = self.token_get("--force-refresh")
        new = r.stdout.decode().strip()
        self.assertNotEqual(new, self.login_token)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assertEqual(self.cached_access_tokens()[USER_READ], new)
        self.assertEqual(self.stored_refresh_token(), self.refresh_requests()[0]["response"]["refresh_token"])
        self.assert_no_secret_leak(r)


class SilentRefreshTest(FlowTestCase):
    """Tokens live 200 s, less than refresh-margin (300); the login's token has expired (it lived
    1 s), so the first call must refresh. Without the agent, so the store's record is what counts."""
    emulator_options = {"device_code_interval": 1, "access_token_lifetime": 200}

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config(extra_broker="agent = off"))
        self.rt = self.signed_in_with_expired_token(200)
        # None when the 1 s token was already at its expiry second at sign-in (then not cached).
        self.login_token = self.cached_access_tokens().get(USER_READ)

    def test_refresh_rotates_and_stores_the_new_refresh_token(self):
        """B08/B11: the emulator receives the stored refresh token; the rotated one is stored
        before the token is handed out, so strict reuse rejection later does not bite."""
        r = self.run_broker("token", "get", "work", timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        refreshes = self.refresh_requests()
        self.assertEqual(len(refreshes), 1)
        self.assertEqual(refreshes[0]["form"]["refresh_token"], self.rt)
        reply = refreshes[0]["response"]
        self.assertEqual(r.stdout.decode().strip(), reply["access_token"])
        self.assertNotEqual(reply["refresh_token"], self.rt)
        self.assertEqual(self.stored_refresh_token(), reply["refresh_token"])
        self.emu.configure(refresh_token_reuse="reject")
        again = self.run_broker("token", "get", "work", "--force-refresh", timeout=30)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(self.refresh_requests()[-1]["form"]["refresh_token"], reply["refresh_token"])
        self.assertEqual(self.stored_refresh_token(), self.refresh_requests()[-1]["response"]["refresh_token"])
        self.assert_no_secret_leak(r, again)

    def check_refresh_keeps_the_refresh_token(self, mode):
        self.emu.configure(refresh_token_mode=mode)
        results = []
        for _ in range(2):
            r = self.run_broker("token", "get", "work", "--force-refresh", timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.stored_refresh_token(), self.rt)
            self.assertEqual(self.refresh_requests()[-1]["form"]["refresh_token"], self.rt)
            results.append(r)
        self.assertEqual(len(self.refresh_requests()), 2)
        self.assert_no_secret_leak(*results)
        return results

    def test_reply_without_refresh_token_keeps_the_stored_one(self):
        """B11: a refresh reply with no `refresh_token` keeps the stored one; refreshing goes on."""
        self.check_refresh_keeps_the_refresh_token("omit")

    def test_reply_with_empty_refresh_token_keeps_the_stored_one(self):
        """B11: `"refresh_token": ""` counts as absent (a warning without any value)."""
        results = self.check_refresh_keeps_the_refresh_token("empty")
        self.assertIn(b"empty refresh_token", results[0].stderr)

    def test_an_expired_token_is_never_handed_out(self):
        """B14: a cached token past its expiry is refreshed, not handed out, by `token get` and
        git `get`, each time (the first call's token lives 2 s and has expired before the second)."""
        seen = {self.login_token} - {None}
        self.emu.configure(access_token_lifetime=2)
        for args, stdin in ((("token", "get", "work"), b""), (("get",), GIT_GET)):
            r = self.run_broker(*args, input=stdin, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            reply = self.refresh_requests()[-1]["response"]
            self.assertIn(reply["access_token"].encode(), r.stdout)
            for old in seen:
                self.assertNotIn(old.encode(), r.stdout)
            seen.add(reply["access_token"])
            time.sleep(2.2)
        self.assertEqual(len(self.refresh_requests()), 2)

    def test_a_token_inside_the_margin_but_not_expired_is_refreshed_first(self):
        """B14's second variant: the cached token has 20 s left, inside refresh-margin (300 s; it
        lives an hour, so half its lifetime does not cap the margin). `token get`, git `get` and
        git `get` with `capability[]=authtype` each refresh before answering: the new token, with
        `password_expiry_utc` past now + refresh-margin, never the cached one."""
        self.emu.configure(access_token_lifetime=3600)
        # A cached item to edit: the login's 1 s token is not cached when it expired before the
        # login could store it (a loaded machine), so refresh once first.
        primed = self.run_broker("token", "get", "work", timeout=30)
        self.assertEqual(primed.returncode, 0, primed.stderr)
        for args, stdin in ((("token", "get", "work"), b""), (("get",), GIT_GET),
                            (("get",), "capability[]=authtype\nwwwauth[]=Bearer\n" + GIT_GET)):
            items = self.items_of_kind("access-token")
            self.assertEqual(len(items), 1, self.keyring_items())
            [item] = items
            record = json.loads(item["secret"])
            now = int(time.time())
            record.update(expires_on=now + 20, obtained_at=now + 20 - 3600)
            self.put_back(item, json.dumps(record))
            before = len(self.refresh_requests())
            r = self.run_broker(*args, input=stdin, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(self.refresh_requests()), before + 1, "refreshed once, before answering")
            new = self.refresh_requests()[-1]["response"]["access_token"]
            self.assertNotIn(record["access_token"].encode(), r.stdout)
            out = r.stdout.decode()
            if args == ("get",):
                lines = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
                self.assertEqual(lines.get("credential" if "authtype" in stdin else "password"), new, out)
                self.assertGreater(int(lines["password_expiry_utc"]), now + 300, out)
            else:
                self.assertEqual(out, new + "\n")
            self.assert_no_secret_leak(r)

    def test_provider_unreachable_hands_out_nothing(self):
        """B14: the cached token is inside the margin and the provider is down: `token get` and
        git `get` exit 4 with nothing on stdout; nothing is deleted."""
        items = self.keyring_items()
        self.emu.stop()
        for args, stdin in ((("token", "get", "work"), b""), (("get",), GIT_GET)):
            r = self.run_broker(*args, input=stdin, timeout=60)
            self.assertEqual(r.returncode, 4, r.stderr)
            self.assertEqual(r.stdout, b"")
            self.assertEqual(len(self.message_lines(r.stderr)), 1, r.stderr)
            self.assert_no_secret_leak(r)
        self.assertEqual(self.keyring_items(), items)

    def test_provider_faulting_hands_out_nothing(self):
        """B14: the same with the provider answering 503 on every attempt (git `get` too)."""
        self.emu.add_fault("status", "token", count=100, status=503)
        for args, stdin in ((("token", "get", "work"), b""), (("get",), GIT_GET)):
            r = self.run_broker(*args, input=stdin, timeout=60)
            self.assertEqual(r.returncode, 4, r.stderr)
            self.assertEqual(r.stdout, b"")
            self.assertNotIn((self.login_token or "AT-").encode(), r.stderr)
            self.assert_no_secret_leak(r)
        self.assertEqual(self.stored_refresh_token(), self.rt)


if __name__ == "__main__":
    unittest.main()
