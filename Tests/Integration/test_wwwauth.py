"""`wwwauth[]` at the protocol level (interface.md §4; bug-cases-3.md X13): the lines git 2.41+
sends (Debian's git 2.39 sends none), fed to `tokenbroker get`, and `token get --claims`.
Another tenant is refused before any refresh, a claims challenge is answered by a token asked for
with those claims (the emulator sees the `claims` parameter), malformed challenges are ignored."""
import base64
import json
import unittest

from test_git_helper import GIT_HOST, GitTestCase, parse_lines

OTHER = "22222222-bbbb-4bbb-8bbb-000000000002"
CLAIMS = '{"access_token":{"nbf":{"essential":true,"value":"1700000000"}}}'


class WWWAuthTest(GitTestCase):

    def get(self, *lines, path="org2/p/_git/r"):
        body = f"protocol=https\nhost={GIT_HOST}\npath={path}\n" + "".join(line + "\n" for line in lines) + "\n"
        return self.run_broker("get", input=body)

    def password(self, r):
        self.assertEqual(r.returncode, 0, r.stderr)
        return dict(parse_lines(r.stdout))["password"]

    def refreshes(self):
        return self.emu.requests(grant_type="refresh_token")

    def own_tenant(self):
        return self.emu.options.tenant_id

    def test_X13_another_tenant_is_refused_before_any_refresh(self):
        self.signed_in()
        cached = self.password(self.get())
        before = len(self.refreshes())
        for _ in range(10):
            r = self.get(f"wwwauth[]=Bearer authorization_uri=https://login.microsoftonline.com/{OTHER}",
                         'wwwauth[]=Basic realm="https://dev.azure.com/"')
            self.assert_refused(r, status=3)
            self.assertIn(f"wants tenant {OTHER}".encode(), r.stderr)
            self.assertIn(f"account 'work' is in {self.own_tenant()}".encode(), r.stderr)
            self.assertIn(f"[host {GIT_HOST}/org2]".encode(), r.stderr)
            e = self.run_broker("erase", input=f"protocol=https\nhost={GIT_HOST}\npath=org2/p/_git/r\n"
                                               f"username=u\npassword=NOT_OURS\n\n")
            self.assertEqual(e.returncode, 0, e.stderr)
        self.assertEqual(len(self.refreshes()), before)
        # Its own tenant (quoted, as Entra writes it) is the ordinary answer.
        r = self.get(f'wwwauth[]=Bearer authorization_uri="https://login.microsoftonline.com/{self.own_tenant()}"')
        self.assertEqual(self.password(r), cached)

    def test_Y05_authorities_that_name_no_tenant_get_the_ordinary_answer(self):
        """Organisations of personal Microsoft accounts report the all-zero GUID as their tenant
        (Entra refuses it as a tenant: AADSTS900021); it, `common`, `organizations` and
        `consumers` name no tenant: the cached token, no refusal, no refresh."""
        self.signed_in()
        cached = self.password(self.get(path="msaorg/p/_git/r"))
        before = len(self.refreshes())
        for authority in ("00000000-0000-0000-0000-000000000000", "common", "organizations", "consumers"):
            with self.subTest(authority=authority):
                r = self.get(f"wwwauth[]=Bearer authorization_uri=https://login.microsoftonline.com/{authority}",
                             'wwwauth[]=Basic realm="https://dev.azure.com/"', path="msaorg/p/_git/r")
                self.assertEqual(self.password(r), cached)
                self.assertNotIn(b"tenant", r.stderr)
        self.assertEqual(len(self.refreshes()), before)

    def test_Y05_a_guest_is_told_the_exact_lines_that_serve_the_other_tenant(self):
        """A guest (B2B) of another tenant: the refusal gives the account to add (the same lines,
        `tenant =` that tenant, the same user's `login-hint`), the `[host …/ORG]` group that binds
        it and the login to run."""
        self.write_config(self.default_config(extra_account="login-hint = user1@example.test"))
        self.signed_in()
        r = self.get(f"wwwauth[]=Bearer authorization_uri=https://login.microsoftonline.com/{OTHER}")
        self.assert_refused(r, status=3)
        line = r.stderr.decode()
        for part in (f"tenant = {OTHER}", "login-hint = user1@example.test", "[account work-org2]",
                     f"[host {GIT_HOST}/org2] with account = work-org2", "tokenbroker login work-org2"):
            self.assertIn(part, line)
        self.assertEqual(len(r.stderr.splitlines()), 1, line)

    def test_a_claims_challenge_gets_a_token_asked_for_with_its_claims(self):
        self.signed_in()
        cached = self.password(self.get())
        for encoded in (base64.b64encode(CLAIMS.encode()).decode(), CLAIMS.replace('"', '\\"')):
            with self.subTest(encoded=encoded[:12]):
                before = len(self.refreshes())
                r = self.get('wwwauth[]=Bearer realm="", authorization_uri="https://login.microsoftonline.com/common", '
                             f'error="insufficient_claims", claims="{encoded}"')
                fresh = self.password(r)
                self.assertNotEqual(fresh, cached)
                self.assertTrue(self.emu.validate_access_token(fresh))
                refreshes = self.refreshes()
                self.assertEqual(len(refreshes), before + 1)
                self.assertEqual(json.loads(refreshes[-1]["form"]["claims"]), json.loads(CLAIMS))
                # The new token is the cached one now: a plain get hands it out without a refresh.
                self.assertEqual(self.password(self.get()), fresh)
                self.assertEqual(len(self.refreshes()), before + 1)
                cached = fresh
        self.assert_no_leak(cached, outputs=[r.stderr])

    def test_malformed_challenges_are_ignored(self):
        self.signed_in()
        cached = self.password(self.get())
        before = len(self.refreshes())
        for line in ('wwwauth[]=Bearer error="insufficient_claims", claims="%%% not base64"',
                     'wwwauth[]=Bearer error="insufficient_claims", claims="W10="',  # base64 of []
                     "wwwauth[]=Bearer authorization_uri=",
                     'wwwauth[]=Bearer authorization_uri="https://login.microsoftonline.com/not-a-guid"',
                     'wwwauth[]=Bearer realm="unterminated',
                     "wwwauth[]=,,,=",
                     "wwwauth[]=Negotiate"):
            with self.subTest(line=line):
                self.assertEqual(self.password(self.get(line)), cached)
        self.assertEqual(len(self.refreshes()), before)

    def test_token_get_claims(self):
        self.signed_in()
        plain = self.run_broker("token", "get", "work")
        self.assertEqual(plain.returncode, 0, plain.stderr)
        r = self.run_broker("token", "get", "work", "--claims", CLAIMS)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotEqual(r.stdout, plain.stdout)
        self.assertEqual(json.loads(self.refreshes()[-1]["form"]["claims"]), json.loads(CLAIMS))
        bad = self.run_broker("token", "get", "work", "--claims", "[1]")
        self.assertEqual(bad.returncode, 64, bad.stderr)
        self.assertIn(b"--claims", bad.stderr)

    def test_a_refused_claims_challenge_names_login_and_keeps_the_refresh_token(self):
        self.signed_in()
        self.emu.set_user_flags(mfa_required=True)
        r = self.get(f'wwwauth[]=Bearer error="insufficient_claims", claims="{base64.b64encode(CLAIMS.encode()).decode()}"')
        self.assert_refused(r, status=3)
        self.assertIn(b"tokenbroker login work", r.stderr)
        self.assertEqual(len(self.refresh_token_items()), 1)


if __name__ == "__main__":
    unittest.main()
