"""bug-cases-3.md X09-X12: exec's endpoints as the real clients read them (interface.md §9 "What
real clients read", "Reply types"), with curl replaying the clients' requests and, where PyPI is
reachable, google-auth and azure-identity themselves (sdk_venv.py). gcloud itself:
test_exec_gcloud.py.
"""
import base64
import json
import os
import re
import time
import unittest

from flows import GOOGLE_DEVICE_CLIENT_ID
from sdk_venv import sdk_python
from test_exec import ExecTestCase

V1 = "http://$GCE_METADATA_HOST/computeMetadata/v1/"
# One response's status, time and every header line, then its body: `curl -sS -D-`.
SHOW = 'curl -sS -D- -w "\\nTIME %%{time_total}\\n" %s "%s%s"; echo "=== END"'
SVC = "https://svc.example.test"


def replies(stdout):
    """[(status, {lower-case header: value}, body, seconds)] of SHOW's output, in order."""
    seen = []
    for block in stdout.decode().split("=== END\n"):
        if not block.strip():
            continue
        head, _, rest = block.replace("\r\n", "\n").partition("\n\n")
        body, _, timing = rest.rpartition("\nTIME ")
        lines = head.splitlines()
        headers = dict((k.strip().lower(), v.strip()) for k, _, v in (line.partition(":") for line in lines[1:]))
        seen.append((int(lines[0].split()[1]), headers, body, float(timing)))
    return seen


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class ExecBugCaseTest(ExecTestCase):

    def google(self, extra="project = demo-proj\nproject-number = 314159265358"):
        """Account `g` signed in by device code (so its ID token's aud is the device client)."""
        self.google_signed_in()
        self.write_config(self.default_config(extra_broker="agent = off") + self.google_config(extra=extra))

    def show(self, path, flags='-H "Metadata-Flavor: Google"'):
        return SHOW % (flags, V1, path)

    def test_X09_both_universe_spellings_and_the_flavor_header_on_every_reply(self):
        """Both spellings answer googleapis.com (google-auth-library-python renamed the path in
        #1613; older clients ask the old one); every reply, 404, 403, 405 and the socket loop's own
        400 and 431 included, carries Metadata-Flavor: Google (gcp-metadata takes a reply without it
        for a foreign server), each within 50 ms."""
        self.google()
        script = "\n".join([
            self.show("universe/universe-domain"),
            self.show("universe/universe_domain"),
            self.show("instance/attributes/nope"),
            self.show("project/project-id", flags=""),  # no Metadata-Flavor request header
            self.show("project/project-id", flags='-X POST -H "Metadata-Flavor: Google"'),
            self.show("project/project-id", flags='-H "Metadata-Flavor: Google" -H "Host: metadata.evil.test"'),
            self.show("project/project-id", flags='-H "Metadata-Flavor: Google" -H "X-Big: $(head -c 20000 /dev/zero | tr "\\0" a)"'),
        ])
        r = self.sh(script, accounts=("g",))
        self.assertEqual(r.returncode, 0, r.stderr)
        seen = replies(r.stdout)
        self.assertEqual([s for s, _, _, _ in seen], [200, 200, 404, 403, 405, 400, 431], r.stdout)
        self.assertEqual([b for _, _, b, _ in seen[:2]], ["googleapis.com", "googleapis.com"])
        for status, headers, body, seconds in seen:
            self.assertEqual(headers.get("metadata-flavor"), "Google", (status, headers))
            self.assertLess(seconds, 0.05, (status, body))

    def test_X09_google_auth_reads_the_universe_domain_project_and_token(self):
        python = sdk_python()
        self.google()
        script = ("import json, time, google.auth, google.auth.transport.requests as t\n"
                  "start = time.monotonic(); creds, project = google.auth.default(); creds.refresh(t.Request())\n"
                  "print(json.dumps([creds.universe_domain, project, bool(creds.token), time.monotonic() - start]))\n")
        r = self.exec(python, "-c", script, accounts=("g",), timeout=120, verbose=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        universe, project, token, seconds = json.loads(r.stdout)
        self.assertEqual((universe, project, token), ("googleapis.com", "demo-proj", True))
        self.assertLess(seconds, 2)
        # No retries: every request was answered at once (no 5xx in the endpoint's log).
        self.assertNotRegex(r.stderr.decode(), r"-> 5\d\d")

    def test_X10_what_gcloud_reads_numeric_project_id_listing_and_recursive_json(self):
        """gcloud's residency check reads project/numeric-project-id and wants digits (else it
        caches False in $CLOUDSDK_CONFIG/gce); Accounts() parses the text listing of
        instance/service-accounts/; the recursive listing is JSON keyed by both names."""
        self.google()
        email = "user1@example.test"
        script = "\n".join([
            self.show("project/numeric-project-id"),
            self.show("instance/service-accounts/"),
            self.show("instance/service-accounts/%s/email" % email),
            self.show("instance/service-accounts/%s/token" % email),
            self.show("project/project-id"),
            self.show("instance/service-accounts/?recursive=true"),
        ])
        r = self.sh(script, accounts=("g",))
        self.assertEqual(r.returncode, 0, r.stderr)
        number, listing, address, token, project, recursive = replies(r.stdout)
        for status, headers, _, _ in (number, listing, address, token, project, recursive):
            self.assertEqual((status, headers.get("metadata-flavor")), (200, "Google"))
        self.assertEqual(number[2], "314159265358")
        self.assertEqual(listing[2].split(), ["default/", email + "/"])
        self.assertEqual(address[2], email)
        self.assertTrue(self.emu.validate_access_token(json.loads(token[2])["access_token"])["active"])
        self.assertEqual(project[2], "demo-proj")
        self.assertEqual(recursive[1]["content-type"], "application/json")
        doc = json.loads(recursive[2])
        self.assertEqual(sorted(doc), ["default", email])
        self.assertEqual(doc["default"], doc[email])
        self.assertEqual(doc["default"]["email"], email)
        self.assertEqual(doc["default"]["aliases"], ["default"])
        self.assertIn("https://www.googleapis.com/auth/cloud-platform", doc["default"]["scopes"])

    def test_X10_the_project_number_is_looked_up_once_at_resource_manager_and_cached(self):
        """Without project-number: Cloud Resource Manager's projects.get with the account's token,
        once; the next exec reads it from the cache (no request)."""
        self.emu.configure(google_projects={"demo-proj": 271828182845})
        rm = "resource-manager-endpoint = %s/google/resourcemanager" % self.emu.base_url
        self.google(extra="project = demo-proj\n" + rm)
        get = 'curl -s -H "Metadata-Flavor: Google" "%sproject/numeric-project-id"; echo' % V1
        for _ in range(2):
            r = self.sh(get + "\n" + get, accounts=("g",))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.decode().split(), ["271828182845"] * 2)
        self.assertEqual(len(self.emu.requests(endpoint="google.resourcemanager")), 1)
        # A project the account cannot see: no digits (gcloud then says it is not on GCE), and
        # tokenbroker says once what to do.
        self.write_config(self.default_config(extra_broker="agent = off")
                          + self.google_config(extra="project = other-proj\n" + rm))
        r = self.sh(get + "\n" + get, accounts=("g",))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotRegex(r.stdout.decode(), r"^\d+$")
        lines = self.message_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("project-number", lines[0])
        self.assertIn("HTTP 403", lines[0])

    def test_X10_without_project_gcloud_gsutil_and_bq_get_a_warning_at_start(self):
        """gcloud takes the endpoint for Compute Engine only when numeric-project-id answers
        digits, which needs `project`: exec says so once at start when COMMAND is gcloud, gsutil
        or bq (stand-ins of those names here), and nothing for other commands."""
        self.google(extra="")
        tools = os.path.join(self.tmp, "bin")
        os.mkdir(tools)
        for name in ("gcloud", "gsutil", "bq"):
            with open(os.path.join(tools, name), "w") as f:
                f.write("#!/bin/sh\nexit 0\n")
            os.chmod(os.path.join(tools, name), 0o755)
        for command in ("gcloud", os.path.join(tools, "gsutil"), "bq"):
            r = self.exec(command, "version", accounts=("g",), env=self.env(PATH=tools + ":" + os.environ["PATH"]))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.message_lines(r.stderr), [
                "tokenbroker: warning: 'g' has no project, so gcloud takes the metadata endpoint for no Compute "
                "Engine; set project (and project-number) in [account g]"], command)
        self.assertEqual(self.message_lines(self.exec("true", accounts=("g",)).stderr), [])

    def test_X11_identity_path_refuses_other_audiences_and_serves_the_accounts_own(self):
        self.google()
        script = "\n".join([
            self.show("instance/service-accounts/default/identity?audience=%s&format=full" % SVC),
            self.show("instance/service-accounts/user1@example.test/identity?audience=%s" % SVC),
            self.show("instance/service-accounts/default/token"),
            self.show("instance/service-accounts/default/identity?audience=%s" % GOOGLE_DEVICE_CLIENT_ID),
        ])
        r = self.sh(script, accounts=("g",), verbose=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        refused, refused_email, token, own = replies(r.stdout)
        access = json.loads(token[2])["access_token"]
        # 404 (what X11 recommends; interface.md says 400): gcloud asks an ID token for its own
        # client on every refresh and ignores only a 404 (test_exec_gcloud.py).
        for status, headers, body, seconds in (refused, refused_email):
            self.assertEqual((status, headers.get("metadata-flavor")), (404, "Google"))
            self.assertIn("a user account cannot mint ID tokens for other audiences", body)
            self.assertNotIn(access, body)
            self.assertNotIn("eyJ", body)  # no JWT of any kind
            self.assertLess(seconds, 5)
        self.assertEqual(own[0], 200)
        self.assertEqual(claims(own[2])["aud"], GOOGLE_DEVICE_CLIENT_ID)
        self.assertNotEqual(own[2], access)
        # One line on tokenbroker's stderr for the exec, not one per request.
        self.assertEqual(sum("cannot mint ID tokens" in line for line in self.message_lines(r.stderr)), 1, r.stderr)
        self.assert_no_exec_leak(r)

    def test_X11_google_auth_fetch_id_token_raises_the_explanation(self):
        python = sdk_python()
        self.google()
        script = ("import google.auth.transport.requests as t, google.oauth2.id_token as i\n"
                  "try:\n    i.fetch_id_token(t.Request(), %r); print('no error')\n"
                  "except Exception as e:\n    print(type(e).__name__, e)\n") % SVC
        r = self.exec(python, "-c", script, accounts=("g",), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("cannot mint ID tokens for other audiences", r.stdout.decode())

    def test_X12_lifetime_fields_expires_on_a_string_expires_in_an_integer_at_least_1(self):
        """App Service expires_on: a JSON string of Unix seconds within 5 s of the real expiry;
        Compute Engine expires_in: a JSON integer >= 1 and <= the real remaining lifetime, also with
        4 s tokens (refreshed before they have less than 2 s left, never 0)."""
        self.emu.configure(access_token_lifetime=4)
        self.google_signed_in()
        self.signed_in()
        self.write_config(self.default_config(extra_broker="agent = off") + self.google_config(extra="project = demo-proj"))
        script = "\n".join(
            ['curl -s -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" '
             '"$IDENTITY_ENDPOINT?api-version=2019-08-01&resource=https://vault.azure.net"; echo']
            + ['curl -s -H "Metadata-Flavor: Google" "%sinstance/service-accounts/default/token"; echo; '
               'date +%%s.%%N; sleep 0.7' % V1] * 8)
        r = self.sh(script, accounts=("work", "g"), timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        issued = {t["token"]: t for t in self.emu.state()["access_tokens"]}
        azure = json.loads(lines[0])
        self.assertIsInstance(azure["expires_on"], str)
        self.assertRegex(azure["expires_on"], r"^\d{10}$")
        self.assertLessEqual(abs(int(azure["expires_on"]) - issued[azure["access_token"]]["exp"]), 5)
        seen = set()
        for doc, when in zip(lines[1::2], lines[2::2]):
            token = json.loads(doc)
            self.assertIs(type(token["expires_in"]), int, doc)
            self.assertGreaterEqual(token["expires_in"], 1)
            self.assertLessEqual(token["expires_in"], issued[token["access_token"]]["exp"] - float(when) + 1)
            seen.add(token["access_token"])
        self.assertGreater(len(seen), 1, "the 4 s tokens were refreshed")

    def test_X12_azure_identity_reports_the_real_expiry(self):
        python = sdk_python()
        self.signed_in()
        script = ("import json\nfrom azure.identity import ManagedIdentityCredential\n"
                  "t = ManagedIdentityCredential().get_token('https://vault.azure.net/.default')\n"
                  "print(json.dumps([t.token, t.expires_on]))\n")
        r = self.exec(python, "-c", script, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        token, expires_on = json.loads(r.stdout)
        self.assertIs(type(expires_on), int)
        self.assertLessEqual(abs(expires_on - self.emu.validate_access_token(token)["exp"]), 5)


if __name__ == "__main__":
    unittest.main()
