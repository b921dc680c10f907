"""`tokenbroker exec` with the real SDKs from PyPI (sdk_venv.py; skipped loudly without PyPI):
azure-identity's DefaultAzureCredential and ManagedIdentityCredential (App Service managed identity
protocol) and google-auth's google.auth.default() (Compute Engine metadata server), each checked
at the emulator; a second google-auth refresh (asked under the account's email); what each SDK
raises when the account is not signed in; a program whose tokens expire while it runs; many
concurrent SDK calls causing one refresh.
"""
import json
import os
import time
import unittest

from sdk_venv import sdk_python
from test_exec import ExecTestCase

GRAPH = "https://graph.microsoft.com/.default"
MGMT = "https://management.azure.com/.default"

AZURE = """
import json, os
from azure.identity import DefaultAzureCredential, ManagedIdentityCredential
d, m = DefaultAzureCredential(), ManagedIdentityCredential()
print(json.dumps({"default_graph": d.get_token(%r).token, "default_mgmt": d.get_token(%r).token,
                  "mi_mgmt": m.get_token(%r).token, "header": os.environ["IDENTITY_HEADER"]}))
""" % (GRAPH, MGMT, MGMT)

# What each SDK raises when the account is not signed in: [exception class, message] or ["no error"].
AZURE_NOT_SIGNED_IN = """
import json, os
from azure.identity import DefaultAzureCredential, ManagedIdentityCredential
seen = {"header": os.environ["IDENTITY_HEADER"]}
for name, credential in (("mi", ManagedIdentityCredential()), ("default", DefaultAzureCredential())):
    try:
        credential.get_token(%r)
        seen[name] = ["no error"]
    except Exception as e:
        seen[name] = [type(e).__name__, str(e)]
print(json.dumps(seen))
""" % GRAPH

GOOGLE_NOT_SIGNED_IN = """
import json, google.auth, google.auth.transport.requests as transport
creds, project = google.auth.default()
try:
    creds.refresh(transport.Request())
    print(json.dumps(["no error"]))
except Exception as e:
    print(json.dumps([type(e).__name__, str(e)]))
"""

GOOGLE = """
import json, google.auth, google.auth.transport.requests as transport
creds, project = google.auth.default()
request = transport.Request()
creds.refresh(request)
first, email = creds.token, creds.service_account_email
creds.refresh(request)
print(json.dumps({"project": project, "first": first, "second": creds.token, "email": email,
                  "valid": creds.valid}))
"""

# Both SDKs get tokens, wait until those expired, and get fresh ones.
LONG_RUNNING = """
import json, sys, time
import google.auth, google.auth.transport.requests as transport
from azure.identity import ManagedIdentityCredential
azure, (google_creds, _) = ManagedIdentityCredential(), google.auth.default()
request, seen = transport.Request(), []
for round in range(2):
    google_creds.refresh(request)
    seen.append({"azure": azure.get_token(%r).token, "google": google_creds.token, "t": time.time()})
    if round == 0:
        time.sleep(float(sys.argv[1]))
print(json.dumps(seen))
""" % GRAPH

CONCURRENT = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from azure.identity import ManagedIdentityCredential
def one(_):
    return ManagedIdentityCredential().get_token(%r).token
with ThreadPoolExecutor(int(sys.argv[1])) as pool:
    print(json.dumps(sorted(set(pool.map(one, range(int(sys.argv[1])))))))
""" % GRAPH


class SDKTest(ExecTestCase):

    def setUp(self):
        self.python = sdk_python()
        super().setUp()

    def active(self, token, scope_part=None):
        info = self.emu.validate_access_token(token)
        self.assertTrue(info and info["active"], info)
        if scope_part:
            self.assertIn(scope_part, info["scope"])
        return info

    def test_azure_identity_gets_tokens_for_two_resources(self):
        self.signed_in()
        r = self.exec(self.python, "-c", AZURE, timeout=120, verbose=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        tokens = json.loads(r.stdout)
        self.active(tokens["default_graph"], GRAPH)
        self.active(tokens["default_mgmt"], MGMT)
        self.active(tokens["mi_mgmt"], MGMT)
        self.assertIn(b"tokenbroker: exec: Azure managed identity: GET /msi/token -> 200", r.stderr)
        self.assert_no_exec_leak(r, tokens["header"])

    def test_not_signed_in_is_a_clear_error_in_both_sdks(self):
        """Not a crash, not a hang: azure-identity (MSAL reads any App Service error as
        'unavailable', so DefaultAzureCredential goes on and fails at the end) and google-auth raise
        their own error carrying tokenbroker's line; tokenbroker says it once on its stderr."""
        self.write_config(self.default_config() + self.google_config(extra="project = proj-exec-1"))
        hint = "'work' is not signed in; run 'tokenbroker login work'"
        r = self.exec(self.python, "-c", AZURE_NOT_SIGNED_IN, timeout=120, verbose=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        seen = json.loads(r.stdout)
        self.assertEqual(seen["mi"][0], "CredentialUnavailableError", seen["mi"])
        self.assertEqual(seen["default"][0], "ClientAuthenticationError", seen["default"])
        for name in ("mi", "default"):
            self.assertIn("tokenbroker: " + hint, seen[name][1])
        # AZURE_TOKEN_CREDENTIALS=prod: no developer credential (az CLI, VS Code, azd) was tried,
        # which would hand out whatever identity they hold.
        for developer in ("AzureCliCredential", "VisualStudioCodeCredential", "AzureDeveloperCliCredential"):
            self.assertNotIn(developer, seen["default"][1])
        self.assertEqual(r.stderr.decode().splitlines().count("tokenbroker: " + hint), 1, r.stderr)
        self.assertIn(b"exec: Azure managed identity: GET /msi/token -> 400", r.stderr)
        self.assert_no_exec_leak(r, seen["header"])

        r = self.exec(self.python, "-c", GOOGLE_NOT_SIGNED_IN, accounts=("g",), timeout=120, verbose=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        kind, message = json.loads(r.stdout)
        self.assertEqual(kind, "RefreshError", message)
        # google-auth shows the body as a bytes repr (quotes escaped): the words, not the quotes.
        for words in ("is not signed in; run", "tokenbroker login g"):
            self.assertIn(words, message)
        self.assertIn(b"exec: Google metadata: GET /computeMetadata/v1/instance/service-accounts/default/ -> 403", r.stderr)

    def test_google_auth_default_refreshes_twice_and_reports_the_project(self):
        self.google_signed_in()
        r = self.run_broker("--verbose", "exec", "g", "--", self.python, "-c", GOOGLE, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["project"], "proj-exec-1")
        self.assertEqual(doc["email"], "user1@example.test")
        self.assertTrue(doc["valid"])
        self.active(doc["first"])
        self.active(doc["second"])
        # The second refresh asks under the account's email, as google-auth does on Compute Engine.
        log = r.stderr.decode()
        self.assertIn("GET /computeMetadata/v1/instance/service-accounts/default/ -> 200", log)
        self.assertIn("GET /computeMetadata/v1/instance/service-accounts/user1@example.test/ -> 200", log)
        self.assertNotIn(doc["first"], log)
        self.assert_no_exec_leak(r)

    def test_a_long_running_program_gets_fresh_tokens_after_they_expire(self):
        self.emu.configure(access_token_lifetime=4)  # from the sign-ins on
        self.google_signed_in()
        self.signed_in()
        self.write_config(self.default_config(extra_broker="agent = off").replace("refresh-margin = 300", "refresh-margin = 1")
                          + self.google_config(extra="project = proj-exec-1"))
        r = self.exec(self.python, "-c", LONG_RUNNING, "5", accounts=("work", "g"), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        first, second = json.loads(r.stdout)
        for kind in ("azure", "google"):
            self.assertNotEqual(first[kind], second[kind])
            info = self.active(second[kind])
            self.assertGreater(info["exp"], second["t"])
            # The first token had expired when the program asked again (so the SDK had to ask).
            issued = {t["token"]: t for t in self.emu.state()["access_tokens"]}
            self.assertLessEqual(issued[first[kind]]["exp"], second["t"], kind)

    def test_concurrent_sdk_calls_with_an_expired_token_cause_one_refresh(self):
        """The in-process single flight (agent = off); scripts/bench measures 100 through the agent."""
        self.write_config(self.default_config(extra_broker="agent = off"))
        self.emu.configure(access_token_lifetime=1)
        self.signed_in()
        self.emu.configure(access_token_lifetime=3600)
        time.sleep(1.2)
        before = len(self.refresh_requests())
        r = self.exec(self.python, "-c", CONCURRENT, "20", timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        tokens = json.loads(r.stdout)
        self.assertEqual(len(tokens), 1, "every caller got the one refreshed token")
        self.active(tokens[0], GRAPH)
        self.assertEqual(len(self.refresh_requests()) - before, 1)


if __name__ == "__main__":
    unittest.main()
