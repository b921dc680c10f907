"""SharePoint accounts (interface.md §2.1, §3; protocols.md §4.2, §7.4) against the
emulator's SharePoint endpoints, with the real keyring and curl as the client.

- bearer: a token for SITE/.default from the `via` account, accepted by the site; cached; git.
- cookie: SPOIDCRL from /_api/SP.OAuth.NativeClient/Authenticate, every format, `curl -b` with the
  cookiejar output; renewal after `cookie-lifetime` and on `--force-refresh`.
- imported-cookies: `login --cookies-from`, B28 (expired: exit 3 naming login; under a day:
  a warning), never a cookie or token in stderr or keyring attributes (B29).
"""
import json
import os
import subprocess
import time
import unittest

from flows import FlowTestCase
from harness import TOKENBROKER


class SharePointTestCase(FlowTestCase):
    emulator_options = {"device_code_interval": 1}
    sp_accounts = ""

    def setUp(self):
        super().setUp()
        self.site = self.emu.base_url
        # A second origin of the same emulator (its certificate also names localhost).
        self.other = self.site.replace("127.0.0.1", "localhost")
        self.write_config(self.default_config() + self.sp_accounts.format(site=self.site, other=self.other))

    def token_get(self, account, *args, code=0):
        r = self.run_broker("token", "get", account, *args, timeout=30)
        self.assertEqual(r.returncode, code, r.stderr)
        return r

    def curl_web(self, *args, input=None):
        """`curl` GET SITE/_api/web with the emulator's CA; returns (status, headers text)."""
        r = subprocess.run(
            ["curl", "-sS", "--cacert", self.ca_file, "-o", "/dev/null", "-D", "-", "-w", "%{http_code}",
             "-H", "Accept: application/json;odata=verbose", *args, self.site + "/_api/web"],
            input=input, capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stdout.decode()
        return int(text[-3:]), text[:-3]

    def authenticate_calls(self):
        return self.emu.requests(endpoint="sp.authenticate")


class BearerModeTest(SharePointTestCase):
    sp_accounts = """
[account intranet]
provider = sharepoint
site = {site}
via = work
mode = bearer
hosts = sp.example.test
"""

    def setUp(self):
        super().setUp()
        self.signed_in()

    def test_bearer_token_is_for_the_site_and_accepted(self):
        token = self.token_get("intranet").stdout.decode().strip()
        info = self.emu.validate_access_token(token)
        self.assertEqual(info["aud"], self.site)
        self.assertEqual(info["scope"], self.site + "/.default")
        header = self.token_get("intranet", "--format", "header").stdout
        self.assertEqual(header, ("Authorization: Bearer %s\n" % token).encode())
        # The header goes to curl on stdin, never in argv.
        self.assertEqual(self.curl_web("-H", "@-", input=header)[0], 200)
        doc = json.loads(self.token_get("intranet", "--format", "json").stdout)
        self.assertEqual((doc["account"], doc["provider"], doc["access_token"], doc["scopes"]),
                         ("intranet", "sharepoint", token, [self.site + "/.default"]))

    def test_token_is_cached_per_site_and_refreshed_silently(self):
        first = self.token_get("intranet")
        refreshes = len(self.refresh_requests())
        second = self.token_get("intranet")
        self.assertEqual(first.stdout, second.stdout)
        self.assertEqual(len(self.refresh_requests()), refreshes)
        self.assertIn(self.site + "/.default", self.cached_access_tokens("work"))
        forced = self.token_get("intranet", "--force-refresh")
        self.assertNotEqual(forced.stdout, first.stdout)
        self.assertTrue(self.emu.validate_access_token(forced.stdout.decode().strip()))
        self.assert_no_secret_leak(first, second, forced)

    def test_git_gets_the_site_token_by_host(self):
        r = self.run_broker("get", input="protocol=https\nhost=sp.example.test\n\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        fields = dict(line.split("=", 1) for line in r.stdout.decode().splitlines() if "=" in line)
        self.assertEqual(self.emu.validate_access_token(fields["password"])["aud"], self.site)

    def test_via_not_signed_in_names_its_login(self):
        self.assertEqual(self.run_broker("logout", "work").returncode, 0)
        r = self.token_get("intranet", code=3)
        self.assertIn(b"tokenbroker login work", r.stderr)

    def test_rclone_lists_a_webdav_folder_with_bearer_token_command(self):
        """rclone's webdav backend (Debian's rclone) with `bearer_token_command = tokenbroker token
        get ACCOUNT` lists a folder of the site; without the command it is refused."""
        conf = os.path.join(self.tmp, "rclone.conf")
        with open(conf, "w") as f:
            f.write(f"[sp]\ntype = webdav\nurl = {self.site}/sites/team/Shared Documents\nvendor = other\n"
                    f"bearer_token_command = {TOKENBROKER} token get intranet\n\n"
                    f"[nobody]\ntype = webdav\nurl = {self.site}/sites/team/Shared Documents\nvendor = other\n")
        rclone = ["rclone", "--config", conf, "--ca-cert", self.ca_file, "--low-level-retries", "1", "--retries", "1"]
        r = subprocess.run(rclone + ["lsf", "sp:"], env=self.env(), capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(r.stdout.decode().split()), ["notes/", "report.txt"])
        r = subprocess.run(rclone + ["lsf", "nobody:"], env=self.env(), capture_output=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)

    def test_cookiejar_is_refused_for_bearer(self):
        r = self.token_get("intranet", "--format", "cookiejar", code=64)
        self.assertIn(b"cookiejar", r.stderr)


class CookieModeTest(SharePointTestCase):
    sp_accounts = """
[account spc]
provider = sharepoint
site = {site}
via = work
mode = cookie
hosts = spc.example.test

[account spshort]
provider = sharepoint
site = {site}
via = work
mode = cookie
cookie-lifetime = 2
"""

    def setUp(self):
        super().setUp()
        self.signed_in()

    def spoidcrl(self, account="spc", *args):
        pair = self.token_get(account, *args).stdout.decode().strip()
        self.assertTrue(pair.startswith("SPOIDCRL="), pair)
        return pair[len("SPOIDCRL="):]

    def test_cookiejar_works_with_curl(self):
        r = self.token_get("spc", "--format", "cookiejar")
        jar = os.path.join(self.tmp, "jar.txt")
        with open(jar, "wb") as f:
            f.write(r.stdout)
        lines = [l for l in r.stdout.decode().splitlines() if l.startswith("#HttpOnly_")]
        self.assertEqual(len(lines), 1, r.stdout)
        fields = lines[0].split("\t")
        self.assertEqual(fields[:4], ["#HttpOnly_127.0.0.1", "FALSE", "/", "TRUE"])
        self.assertGreater(int(fields[4]), time.time())
        self.assertEqual(fields[5], "SPOIDCRL")
        self.assertEqual(self.curl_web("-b", jar)[0], 200)
        self.assert_no_leak(fields[6], outputs=[r.stderr])

    def test_a_new_sign_in_of_via_drops_the_cookie(self):
        """B20: the cookie derives from `via`'s sign-in; when `via` signs in again as another user,
        the old cookie is never handed out (through the agent as well)."""
        old = self.spoidcrl()
        self.emu.set_user("user2@example.test")
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"user2@example.test", r.stdout)
        new = self.spoidcrl()
        self.assertNotEqual(new, old)
        self.assertEqual(len(self.authenticate_calls()), 2)

    def test_formats_and_cache(self):
        value = self.spoidcrl()
        self.assertEqual(len(self.authenticate_calls()), 1)
        header = self.token_get("spc", "--format", "header").stdout
        self.assertEqual(header, ("Cookie: SPOIDCRL=%s\n" % value).encode())
        self.assertEqual(self.curl_web("-H", "@-", input=header)[0], 200)
        doc = json.loads(self.token_get("spc", "--format", "json").stdout)
        self.assertEqual(doc["account"], "spc")
        (cookie,) = doc["cookies"]
        self.assertEqual({k: cookie[k] for k in ("name", "value", "domain", "path", "http_only", "secure")},
                         {"name": "SPOIDCRL", "value": value, "domain": "127.0.0.1", "path": "/",
                          "http_only": True, "secure": True})
        self.assertEqual(len(self.authenticate_calls()), 1)  # all from the keyring
        items = self.items_of_kind("cookies", "spc")
        self.assertEqual(len(items), 1)
        self.assertEqual(json.loads(items[0]["secret"])["cookies"][0]["value"], value)
        self.assert_no_leak(value)

    def test_force_refresh_renews_a_cookie_the_site_rejects(self):
        first = self.spoidcrl()
        self.emu.sharepoint.expire(first)
        status, headers = self.curl_web("-H", "Cookie: SPOIDCRL=" + first)
        self.assertEqual(status, 403)
        self.assertIn("X-MSDAVEXT_Error: 917656", headers)
        second = self.spoidcrl("spc", "--force-refresh")
        self.assertNotEqual(first, second)
        self.assertEqual(len(self.authenticate_calls()), 2)
        self.assertEqual(self.spoidcrl(), second)

    def bearers_sent(self):
        return [c["headers"]["authorization"][len("Bearer "):] for c in self.authenticate_calls()]

    def test_force_refresh_renews_the_site_token_the_site_refuses(self):
        """The site refuses the cached bearer before its local expiry;
        --force-refresh renews the whole chain: a new site token, then a new cookie."""
        first = self.spoidcrl()
        (cached,) = self.bearers_sent()
        self.emu.sharepoint.refuse_bearer(cached)
        second = self.spoidcrl("spc", "--force-refresh")
        self.assertNotEqual(first, second)
        self.assertEqual(self.curl_web("-H", "Cookie: SPOIDCRL=" + second)[0], 200)
        self.assertNotIn(cached, self.bearers_sent()[1:])
        self.assertIsNotNone(self.stored_refresh_token())

    def test_a_refused_cached_site_token_is_dropped_and_refreshed_once(self):
        first = self.spoidcrl()
        (cached,) = self.bearers_sent()
        self.emu.sharepoint.refuse_bearer(cached)
        r = self.run_broker("erase", input="protocol=https\nhost=spc.example.test\npassword=%s\n\n" % first)
        self.assertEqual(r.returncode, 0, r.stderr)
        second = self.spoidcrl()  # cached bearer: 401, dropped, refreshed, one retry
        self.assertNotEqual(first, second)
        self.assertEqual([c["status"] for c in self.authenticate_calls()], [200, 401, 200])
        self.assertNotEqual(self.bearers_sent()[2], cached)
        self.assertIsNotNone(self.stored_refresh_token())
        self.assertEqual(self.spoidcrl(), second)

    def test_a_site_refusing_every_token_gives_one_line_and_deletes_nothing(self):
        self.spoidcrl()
        self.emu.sharepoint.refuse_bearer()
        r = self.run_broker("token", "get", "spc", "--force-refresh", timeout=30)
        self.assertNotEqual(r.returncode, 0)
        lines = r.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith("tokenbroker: "), lines)
        self.assertIn("HTTP 401", lines[0])
        self.assertEqual(len(self.authenticate_calls()), 2)  # the fresh token is not retried
        self.assertIsNotNone(self.stored_refresh_token())
        self.assertEqual(len(self.items_of_kind("cookies", "spc")), 1)

    def test_git_erase_of_the_cookie_renews_it_at_once(self):
        """B28: after a caller reports the cookie rejected (git `erase`), the next get never
        returns it again."""
        first = self.spoidcrl()
        r = self.run_broker("erase", input="protocol=https\nhost=spc.example.test\npassword=%s\n\n" % first)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.items_of_kind("cookies", "spc"), [])
        second = self.spoidcrl()
        self.assertNotEqual(first, second)
        self.assertEqual(self.spoidcrl(), second)
        self.assert_no_leak(first, second, outputs=[r.stdout, r.stderr])

    def test_renewed_after_cookie_lifetime(self):
        first = self.spoidcrl("spshort")
        self.assertEqual(self.spoidcrl("spshort"), first)
        time.sleep(2.5)
        second = self.spoidcrl("spshort")
        self.assertNotEqual(first, second)
        self.assertEqual(len(self.authenticate_calls()), 2)

    def test_renewed_silently_before_it_expires_at_the_site(self):
        """The site sets SPOIDCRL to expire soon (here 302 s, inside refresh-margin 300 after two
        seconds): token get renews it silently and curl keeps getting in."""
        self.emu.sharepoint.spoidcrl_lifetime = 302
        first = self.spoidcrl()
        time.sleep(2.5)
        self.emu.sharepoint.spoidcrl_lifetime = 3600
        second = self.spoidcrl()
        self.assertNotEqual(first, second)
        self.assertEqual(self.curl_web("-b", "SPOIDCRL=" + second)[0], 200)
        self.assertEqual(len(self.authenticate_calls()), 2)

    def test_env_format_is_refused(self):
        self.token_get("spc", "--format", "env", code=64)


class ImportedCookiesTest(SharePointTestCase):
    sp_accounts = """
[account spi]
provider = sharepoint
site = {site}
mode = imported-cookies

[account spi2]
provider = sharepoint
site = {site}
mode = imported-cookies
cookie-lifetime = 2
"""

    def cookie_file(self, lifetime, netscape=True):
        fedauth, rtfa, exp = self.emu.sharepoint.add_cookies(lifetime)
        path = os.path.join(self.tmp, "cookies-%d.txt" % lifetime)
        with open(path, "w") as f:
            if netscape:
                f.write("# Netscape HTTP Cookie File\n")
                f.write("#HttpOnly_127.0.0.1\tFALSE\t/\tTRUE\t%d\tFedAuth\t%s\n" % (exp, fedauth))
                f.write("#HttpOnly_127.0.0.1\tFALSE\t/\tTRUE\t%d\trtFa\t%s\n" % (exp, rtfa))
                f.write("#HttpOnly_other.example\tFALSE\t/\tTRUE\t%d\tFedAuth\tforeign\n" % exp)
            else:
                f.write("Cookie: FedAuth=%s; rtFa=%s\n" % (fedauth, rtfa))
        return path, fedauth, rtfa

    def login_cookies(self, account, path, code=0):
        r = self.run_broker("login", account, "--cookies-from", path, timeout=30)
        self.assertEqual(r.returncode, code, r.stderr)
        return r

    def test_pasted_cookies_on_a_terminal(self):
        """On a terminal, login opens Authenticate.aspx and reads the pasted FedAuth and rtFa
        values with echo off; they are checked at the site and stored; off a terminal, login says
        to use --cookies-from."""
        import pty
        import select
        fedauth, rtfa, _ = self.emu.sharepoint.add_cookies(3 * 86400)
        master, slave = pty.openpty()
        p = subprocess.Popen([TOKENBROKER, "login", "spi", "--no-open"], stdin=slave, stdout=subprocess.PIPE,
                             stderr=slave, env=self.env())
        os.close(slave)
        text = ""

        def read_until(needle):
            nonlocal text
            deadline = time.time() + 30
            while needle not in text and time.time() < deadline:
                if select.select([master], [], [], 0.2)[0]:
                    text += os.read(master, 4096).decode(errors="replace")
            self.assertIn(needle, text)

        read_until("FedAuth value")
        self.assertIn("/_layouts/15/Authenticate.aspx?Source=/", text)
        os.write(master, fedauth.encode() + b"\n")
        read_until("rtFa value")
        os.write(master, rtfa.encode() + b"\n")
        out, _ = p.communicate(timeout=30)
        try:
            while select.select([master], [], [], 0.2)[0]:
                text += os.read(master, 4096).decode(errors="replace")
        except OSError:
            pass
        os.close(master)
        self.assertEqual(p.returncode, 0, text)
        self.assertIn(b"stored FedAuth, rtFa for spi", out)
        self.assertNotIn(fedauth, text)  # echo was off
        self.assertNotIn(rtfa, text)
        self.assertEqual(self.token_get("spi", "--format", "header").stdout,
                         ("Cookie: FedAuth=%s; rtFa=%s\n" % (fedauth, rtfa)).encode())
        r = self.run_broker("login", "spi", timeout=30)
        self.assertEqual(r.returncode, 64)
        self.assertIn(b"--cookies-from", r.stderr)

    def test_imported_cookies_end_to_end(self):
        path, fedauth, rtfa = self.cookie_file(3 * 86400)
        login = self.login_cookies("spi", path)
        self.assertEqual(len(self.emu.requests(endpoint="sp.web")), 1)
        got = self.token_get("spi", "--format", "header")
        self.assertEqual(got.stdout, ("Cookie: FedAuth=%s; rtFa=%s\n" % (fedauth, rtfa)).encode())
        self.assertEqual(got.stderr, b"")
        jar = os.path.join(self.tmp, "jar.txt")
        with open(jar, "wb") as f:
            f.write(self.token_get("spi", "--format", "cookiejar").stdout)
        self.assertEqual(self.curl_web("-b", jar)[0], 200)
        self.assert_no_leak(fedauth, rtfa, outputs=[login.stdout, login.stderr, got.stderr])

    def test_less_than_a_day_left_warns(self):
        path, fedauth, _ = self.cookie_file(3600)
        self.login_cookies("spi", path)
        r = self.token_get("spi")
        self.assertIn(b"warning:", r.stderr)
        self.assertIn(b"tokenbroker login spi", r.stderr)
        self.assert_no_leak(fedauth, outputs=[r.stderr])

    def test_b28_expired_cookies_exit_3(self):
        path, fedauth, rtfa = self.cookie_file(3)
        self.login_cookies("spi", path)
        self.token_get("spi")
        time.sleep(3.5)
        status, headers = self.curl_web("-H", "Cookie: FedAuth=%s; rtFa=%s" % (fedauth, rtfa))
        self.assertEqual(status, 403)
        self.assertIn("X-MSDAVEXT_Error", headers)
        r = self.token_get("spi", code=3)
        self.assertEqual(r.stdout, b"")
        self.assertIn(b"tokenbroker login spi", r.stderr)
        self.assert_no_leak(fedauth, rtfa, outputs=[r.stderr])

    def test_b28_cookie_line_expires_after_cookie_lifetime(self):
        path, fedauth, _ = self.cookie_file(3600, netscape=False)
        self.login_cookies("spi2", path)
        self.token_get("spi2")
        time.sleep(2.5)
        r = self.token_get("spi2", code=3)
        self.assertIn(b"tokenbroker login spi2", r.stderr)

    def test_rejected_cookies_are_not_stored(self):
        path, _, _ = self.cookie_file(3600)
        self.emu.sharepoint.expire()
        r = self.login_cookies("spi", path, code=6)
        self.assertIn(b"did not accept", r.stderr)
        self.token_get("spi", code=3)
        self.assertEqual(self.items_of_kind("cookies", "spi"), [])


class SiteIsolationTest(SharePointTestCase):
    """Two sites (the emulator as 127.0.0.1 and as localhost: two origins, like `contoso` and
    `contoso-my`) never get each other's tokens or cookies."""
    sp_accounts = """
[account spa]
provider = sharepoint
site = {site}
via = work
mode = cookie

[account spb]
provider = sharepoint
site = {other}
via = work
mode = cookie

[account spbearer]
provider = sharepoint
site = {other}
via = work
"""

    def setUp(self):
        super().setUp()
        self.signed_in()

    def test_cookies_and_tokens_stay_with_their_site(self):
        a = self.token_get("spa", "--format", "header").stdout
        b = self.token_get("spb", "--format", "header").stdout
        self.assertNotEqual(a, b)
        self.assertEqual(self.curl_web("-H", "@-", input=a)[0], 200)
        self.assertEqual(self.curl_web("-H", "@-", input=b)[0], 403)  # b's cookie at a's site
        token = self.token_get("spbearer").stdout.decode().strip()
        self.assertEqual(self.emu.validate_access_token(token)["aud"], self.other)
        header = ("Authorization: Bearer %s\n" % token).encode()
        self.assertEqual(self.curl_web("-H", "@-", input=header)[0], 403)
        tokens = self.cached_access_tokens("work")
        self.assertIn(self.site + "/.default", tokens)
        self.assertIn(self.other + "/.default", tokens)
        self.assertNotEqual(tokens[self.site + "/.default"], tokens[self.other + "/.default"])


class TwoTenantsTest(SharePointTestCase):
    """Two tenants: sites signed in through two Azure accounts of different tenants (and users)
    never get each other's tokens or cookies."""
    sp_accounts = """
[account other-tenant]
provider = azure
tenant = fabrikam.example
client-id = 22222222-3333-4444-5555-666666666666
authority = {site}

[account spa]
provider = sharepoint
site = {site}
via = work
mode = cookie

[account spf]
provider = sharepoint
site = {other}
via = other-tenant
mode = cookie
"""

    def test_each_tenant_keeps_its_own_tokens_and_cookies(self):
        self.signed_in()
        self.emu.set_user("user2@fabrikam.example", tid="fabrikam-tid")
        r = self.login_and_approve("other-tenant")
        self.assertEqual(r.returncode, 0, r.stderr)
        a = self.token_get("spa", "--format", "header").stdout
        f = self.token_get("spf", "--format", "header").stdout
        self.assertNotEqual(a, f)
        self.assertEqual(self.curl_web("-H", "@-", input=a)[0], 200)
        self.assertEqual(self.curl_web("-H", "@-", input=f)[0], 403)
        users = {self.emu.validate_access_token(t)["username"]
                 for acct in ("work", "other-tenant") for t in self.cached_access_tokens(acct).values()}
        self.assertEqual(users, {"user1@example.test", "user2@fabrikam.example"})
        self.assertEqual(self.cached_access_tokens("spa"), {})
        # Signing the first tenant out takes its site's cookie with it, not the other's.
        self.assertEqual(self.run_broker("logout", "work").returncode, 0)
        self.token_get("spa", code=3)
        self.assertEqual(self.token_get("spf", "--format", "header").stdout, f)


if __name__ == "__main__":
    unittest.main()
