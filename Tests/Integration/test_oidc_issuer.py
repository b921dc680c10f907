"""`provider = oidc` issuer handling against the emulator's generic OpenID Provider
(Tests/Emulator/idp/oidc.py): bug-cases-3.md X01 (an issuer with a terminating `/`) and X04
(ID-token rules at refresh); X02 (Entra's `{tenantid}` template, Google's scheme-less `iss`)
against the emulator's Azure and Google. Real binaries, real gnome-keyring.
"""
import json
import unittest

from flows import BrowserFlows, FlowTestCase
from harness import CLIENT_ID

AUTHENTIK = "/application/o/app/"


class OIDCIssuerTest(BrowserFlows, FlowTestCase):
    emulator_options = {"auto_consent": True, "device_code_interval": 1}

    def oidc_config(self, issuer, name="app", extra=""):
        return f"""[broker]
ca-file = {self.ca_file}
login-timeout = 30

[account {name}]
provider = oidc
issuer = {issuer}
client-id = cli
flow = device-code
{extra}
"""

    def oidc_login(self, account="app"):
        seen = len([r for r in self.emu.requests(endpoint="oidc.devicecode") if r["status"] == 200])
        p = self.start_login(account)
        dc = self.wait_for_device_code(seen, endpoint="oidc.devicecode")
        self.emu.approve(dc["user_code"])
        return self.finish(p)

    def test_X01_issuer_with_trailing_slash(self):
        base = self.emu.base_url
        self.emu.oidc.configure(path=AUTHENTIK)
        slashed, typed = base + AUTHENTIK, base + AUTHENTIK.rstrip("/")

        # 1. The issuer as the server prints it: one discovery GET at the single-slash path.
        self.write_config(self.oidc_config(slashed))
        r = self.oidc_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        paths = [q["path"] for q in self.emu.requests()]
        self.assertEqual(paths.count(AUTHENTIK + ".well-known/openid-configuration"), 1, paths)
        self.assertFalse([p for p in paths if "//" in p], paths)
        self.assertFalse(self.emu.requests(endpoint="oidc.rfc8414"), "RFC 8414 tried although OIDC answered")
        stored = self.stored_refresh_token("app")
        self.assertTrue(stored)

        # 2. What users type (no slash), with the document of step 1 cached: exit 64, both
        # values in one line, nothing after discovery, nothing written.
        self.write_config(self.oidc_config(typed))
        before = len(self.emu.requests())
        r = self.run_broker("login", "app", "--device-code")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertEqual(r.stdout, b"")
        lines = self.message_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(f"'{typed}'", lines[0])
        self.assertIn(f"'{slashed}'", lines[0])
        self.assertIn("differ only in a terminating '/'", lines[0])
        self.assertIn(f"issuer = {slashed}", lines[0])
        after = [q["endpoint"] for q in self.emu.requests()[before:]]
        self.assertEqual(after, ["oidc.discovery"])
        self.assertEqual(self.stored_refresh_token("app"), stored)

        # 3. The document has the slash, the ID token's iss does not: exit 6, nothing stored.
        self.emu.oidc.configure(path=AUTHENTIK, id_token_iss=typed)
        self.write_config(self.oidc_config(slashed, name="app3"))
        r = self.oidc_login("app3")
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("iss", r.stderr.decode())
        self.assertIsNone(self.stored_refresh_token("app3"))

        # 4. Browser flow: RFC 9207 promised, the redirect's iss lacks the slash: exit 6, no
        # code redemption.
        self.emu.oidc.configure(path=AUTHENTIK, iss_parameter=True, response_iss=typed)
        self.write_config(self.oidc_config(slashed, name="app4", extra="flow = browser"))
        r, _ = self.browser_login("app4")
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("another issuer", r.stderr.decode())
        self.assertFalse(self.emu.requests(grant_type="authorization_code"))
        self.assertIsNone(self.stored_refresh_token("app4"))

    def test_X06_discovery_answered_with_html_is_exit_64_and_not_cached(self):
        """X06 step 5: the discovery document answered 200 text/html (a proxy's page): exit 64
        saying so (HTML, a proxy?), nothing signed in; the page is not cached, so the next
        login fetches the document again and signs in."""
        base = self.emu.base_url
        self.emu.oidc.configure(path=AUTHENTIK)
        self.write_config(self.oidc_config(base + AUTHENTIK))
        self.emu.add_fault("html", "oidc.discovery", status=200)
        r = self.run_broker("login", "app", "--device-code", timeout=60)
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn(b"HTTP 200 with text/html, not JSON (HTML, a proxy?)", r.stderr)
        self.assertNotIn(b"enter the code", r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        r = self.oidc_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([q["fault"] for q in self.emu.requests(endpoint="oidc.discovery")], ["html", None])

    def test_X01_origin_issuer_and_rfc8414_only_after_404(self):
        base = self.emu.base_url
        # 5. Auth0's shape: an origin with a slash; discovery is GET /.well-known/openid-configuration.
        self.emu.oidc.configure(path="/")
        self.write_config(self.oidc_config(base + "/"))
        r = self.oidc_login()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([q["path"] for q in self.emu.requests(endpoint="oidc.discovery")],
                         ["/.well-known/openid-configuration"])

        # The path issuer whose OpenID location answers 404: RFC 8414's, without the slash.
        self.emu.oidc.configure(path=AUTHENTIK, oidc_location=False, rfc8414=True)
        self.write_config(self.oidc_config(base + AUTHENTIK, name="app5"))
        r = self.oidc_login("app5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([q["path"] for q in self.emu.requests(endpoint="oidc.rfc8414")],
                         ["/.well-known/oauth-authorization-server/application/o/app"])

    # --- X04

    def keycloak_sign_in(self, name="kc"):
        """A browser sign-in at a Keycloak-shaped issuer with strict rotation; returns its nonce."""
        self.emu.configure(refresh_token_reuse="reject")
        self.emu.oidc.configure(path="/realms/kc")
        self.write_config(self.oidc_config(self.emu.base_url + "/realms/kc", name=name, extra="flow = browser"))
        r, _ = self.browser_login(name)
        self.assertEqual(r.returncode, 0, r.stderr)
        return self.emu.requests(endpoint="oidc.authorize")[-1]["query"]["nonce"]

    def refresh_with(self, script, name="kc"):
        """`token get --force-refresh` with the next refresh reply's ID token as `script` says;
        returns (CompletedProcess, the refresh replies it caused)."""
        self.emu.oidc.script_id_tokens([script])
        before = len(self.emu.requests(grant_type="refresh_token"))
        r = self.run_broker("token", "get", name, "--force-refresh")
        return r, self.emu.requests(grant_type="refresh_token")[before:]

    def test_X04_refresh_id_token_rules(self):
        n1 = self.keycloak_sign_in()
        self.assertTrue(n1)
        # 1. A: no id_token; B: one without nonce; C: with the sign-in's nonce. Each served and
        # the rotated token stored (strict rotation: the next refresh must send it).
        for script in (None, {}, {"nonce": n1}):
            r, replies = self.refresh_with(script)
            self.assertEqual((r.returncode, len(replies)), (0, 1), (script, r.stderr))
            reply = replies[0]["response"]
            self.assertEqual(r.stdout.decode().strip(), reply["access_token"])
            self.assertEqual(self.stored_refresh_token("kc"), reply["refresh_token"])
        accounts = self.run_broker("accounts")
        self.assertIn("user1@example.test", accounts.stdout.decode())

        # 2. C again with a fresh agent: the nonce is kept with the sign-in, not only in memory.
        self.run_broker("agent", "stop")
        r, _ = self.refresh_with({"nonce": n1})
        self.assertEqual(r.returncode, 0, r.stderr)

        # 3. D (another nonce), F (aud without the client): exit 1 naming the claim; the rotated
        # token stored, no access token handed out, nothing deleted, one request per call.
        for script, claim in (({"nonce": "N2"}, "nonce"), ({"aud": "someone-else"}, "aud"),
                              ({"nonce": "N2"}, "nonce")):
            r, replies = self.refresh_with(script)
            self.assertEqual((r.returncode, len(replies)), (1, 1), (script, r.stderr))
            self.assertEqual(r.stdout, b"")
            self.assertIn(claim, r.stderr.decode())
            self.assertIn("/realms/kc", r.stderr.decode())
            self.assertEqual(self.stored_refresh_token("kc"), replies[0]["response"]["refresh_token"])
            self.assertNotIn(replies[0]["response"]["access_token"].encode(), r.stdout + r.stderr)

        # 4. E: another sub: exit 3, nothing handed out, the items stay until the next login.
        r, replies = self.refresh_with({"sub": "S2"})
        self.assertEqual((r.returncode, r.stdout), (3, b""), r.stderr)
        self.assertIn("different user", r.stderr.decode())
        self.assertIn("tokenbroker login kc", r.stderr.decode())
        self.assertEqual(self.stored_refresh_token("kc"), replies[0]["response"]["refresh_token"])

    def test_X04_login_still_holds_the_nonce_sent(self):
        # 5. At sign-in, a nonce other than the one sent still fails the login.
        self.emu.oidc.configure(path="/realms/kc")
        self.emu.oidc.script_id_tokens([{"nonce": "N2"}])
        self.write_config(self.oidc_config(self.emu.base_url + "/realms/kc", name="kc", extra="flow = browser"))
        r, _ = self.browser_login("kc")
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("nonce", r.stderr.decode())
        self.assertIsNone(self.stored_refresh_token("kc"))

    # --- X02

    def login_at(self, account, endpoint):
        seen = len([r for r in self.emu.requests(endpoint=endpoint) if r["status"] == 200])
        p = self.start_login(account)
        dc = self.wait_for_device_code(seen, endpoint=endpoint)
        self.emu.approve(dc["user_code"])
        return self.finish(p)

    def test_X02_entra_template_issuer_and_tenant_issuers(self):
        base, t1 = self.emu.base_url, self.emu.options.tenant_id
        entra = f"client-id = {CLIENT_ID}"
        # 1. The multi-tenant document names {tenantid}: exit 64 before any sign-in, both ways out.
        self.write_config(self.oidc_config(base + "/common/v2.0", name="ms").replace("client-id = cli", entra))
        r = self.run_broker("login", "ms", "--device-code")
        self.assertEqual((r.returncode, r.stdout), (64, b""), r.stderr)
        line = r.stderr.decode()
        for text in ("{tenantid}", "'provider = azure'", "'tenant = organizations'", f"{base}/TENANT-ID/v2.0"):
            self.assertIn(text, line)
        self.assertEqual([q["endpoint"] for q in self.emu.requests()], ["openid-configuration"])
        self.assertIsNone(self.stored_refresh_token("ms"))

        # 2. The tenant's own issuer: signed in, identity from preferred_username.
        self.write_config(self.oidc_config(f"{base}/{t1}/v2.0", name="ms").replace("client-id = cli", entra))
        r = self.login_at("ms", "devicecode")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("user1@example.test", r.stdout.decode())

        # 3. provider = azure at organizations: the ID token names T1, and T1 is what is stored.
        self.write_config(f"""[broker]
ca-file = {self.ca_file}

[account az]
provider = azure
tenant = organizations
{entra}
authority = {base}
""")
        r = self.login_at("az", "devicecode")
        self.assertEqual(r.returncode, 0, r.stderr)
        item = self.items_of_kind("refresh-token", "az")[0]
        self.assertEqual(json.loads(item["secret"])["tenant"], t1)

    def test_X02_google_scheme_less_iss_for_google_only(self):
        # 4. provider = google: both iss forms are accepted.
        self.write_config(f"[broker]\nca-file = {self.ca_file}\n" + self.google_config("g"))
        for bare in (False, True):
            self.emu.configure(google_iss_without_scheme=bare)
            r = self.login_at("g", "google.devicecode")
            self.assertEqual(r.returncode, 0, (bare, r.stderr))
        # provider = oidc with another issuer: a scheme-less iss is refused.
        base = self.emu.base_url
        self.emu.oidc.configure(path=AUTHENTIK, id_token_iss=base.split("://", 1)[1] + AUTHENTIK)
        self.write_config(self.oidc_config(base + AUTHENTIK))
        r = self.oidc_login()
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("iss", r.stderr.decode())
        self.assertIsNone(self.stored_refresh_token("app"))


if __name__ == "__main__":
    unittest.main()
