"""The Azure CLI from PyPI (sdk_venv.az_cli) under `tokenbroker exec` (interface.md §9): `az login
--identity` takes the App Service managed identity endpoint for a managed identity, lists the
subscriptions at the ARM endpoint of a cloud registered with `az cloud register` (a small HTTPS
server of this test, which accepts only tokens the emulator issued for ARM), and `az account
get-access-token --resource https://graph.microsoft.com` hands out the account's Graph token.
The emulator issues JWT access tokens here, as Entra does: az reads the tenant from the token.
"""
import hashlib
import http.server
import json
import os
import ssl
import subprocess
import threading

from harness import cert_dir
from sdk_venv import az_cli
from test_exec import ExecTestCase

SUBSCRIPTION = "0b1f6471-1bf0-4dda-aec3-111122223333"
ARM_RESOURCE = "https://management.core.windows.net/"


class FakeARM(http.server.ThreadingHTTPServer):
    """`GET /subscriptions` of Azure Resource Manager over TLS (the emulator's certificate),
    answered only for a bearer token the emulator says is live and for ARM."""

    def __init__(self, emu):
        self.emu, self.seen = emu, []
        super().__init__(("127.0.0.1", 0), ARMHandler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        d = cert_dir()
        context.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
        self.socket = context.wrap_socket(self.socket, server_side=True)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return "https://127.0.0.1:%d/" % self.server_address[1]


class ARMHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        info = self.server.emu.validate_access_token(auth[7:]) if auth.startswith("Bearer ") else None
        self.server.seen.append((self.path.split("?")[0], bool(info), info and info["aud"]))
        if not info or not info["aud"].startswith(ARM_RESOURCE.rstrip("/")):
            return self.reply(401, {"error": {"code": "InvalidAuthenticationToken", "message": "no"}})
        if self.path.split("?")[0].rstrip("/") != "/subscriptions":
            return self.reply(404, {"error": {"code": "NotFound", "message": self.path}})
        self.reply(200, {"value": [{
            "id": "/subscriptions/" + SUBSCRIPTION, "subscriptionId": SUBSCRIPTION, "tenantId": info["tid"],
            "displayName": "tokenbroker test", "state": "Enabled", "authorizationSource": "RoleBased",
            "subscriptionPolicies": {"locationPlacementId": "Public_2014-09-01", "quotaId": "x", "spendingLimit": "Off"}}]})

    def reply(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class AzureCLITest(ExecTestCase):

    def test_az_login_identity_then_get_access_token_for_graph(self):
        az, arm, config, env = self.az_with_test_cloud()
        script = ("az login --identity --output json; echo '=='; "
                  "az account get-access-token --resource https://graph.microsoft.com --output json")
        r = self.sh(script, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        login, token = r.stdout.decode().split("==\n")
        subscriptions = json.loads(login)
        self.assertEqual([s["id"] for s in subscriptions], [SUBSCRIPTION], login)
        self.assertEqual(subscriptions[0]["user"]["type"], "servicePrincipal")
        self.assertEqual(arm.seen[-1][:2], ("/subscriptions", True))
        doc = json.loads(token)
        info = self.emu.validate_access_token(doc["accessToken"])
        self.assertTrue(info and info["active"], info)
        self.assertIn("https://graph.microsoft.com/.default", info["scope"])
        self.assertEqual(doc["subscription"], SUBSCRIPTION)
        self.assertLessEqual(abs(int(doc["expires_on"]) - info["exp"]), 5)

    def run_cmd(self, argv, env):
        return subprocess.run(argv, env=env, capture_output=True, timeout=300)

    def az_with_test_cloud(self):
        """Signed in, with az's cloud `TokenbrokerTest` registered and current: its Azure AD is the
        emulator, its Resource Manager a FakeARM. Returns (az, arm, AZURE_CONFIG_DIR, env)."""
        az = az_cli()
        self.emu.configure(azure_jwt_access_tokens=True)
        self.signed_in()
        arm = FakeARM(self.emu)
        self.addCleanup(arm.server_close)
        self.addCleanup(arm.shutdown)
        config = os.path.join(self.tmp, "azure-config")
        env = self.env(AZURE_CONFIG_DIR=config, REQUESTS_CA_BUNDLE=self.ca_file, AZURE_CORE_COLLECT_TELEMETRY="false",
                       AZURE_CORE_SURVEY_MESSAGE="false", AZURE_CORE_ONLY_SHOW_ERRORS="true",
                       PATH=os.path.dirname(az) + ":" + os.environ["PATH"])
        for args in (["cloud", "register", "--name", "TokenbrokerTest", "--skip-endpoint-discovery",
                      "--endpoint-resource-manager", arm.url,
                      "--endpoint-active-directory", self.emu.base_url,
                      "--endpoint-active-directory-resource-id", ARM_RESOURCE,
                      "--endpoint-active-directory-graph-resource-id", "https://graph.windows.net/"],
                     ["cloud", "set", "--name", "TokenbrokerTest"]):
            r = self.run_cmd([az] + args, env)
            self.assertEqual(r.returncode, 0, r.stderr)
        return az, arm, config, env

    def test_Y19_az_login_identity_under_exec_leaves_the_users_az_profile_alone(self):
        """`az login --identity` writes the identity as az's default user into its profile. Under
        exec it writes a private copy of the user's az settings (`AZURE_CONFIG_DIR`: `config` and
        `clouds.config`, so the registered cloud is still the current one), removed when COMMAND
        ends: the user's own files are byte for byte as before, and a plain `az account show`
        afterwards still shows the user's own account."""
        az, arm, config, env = self.az_with_test_cloud()
        # The user's own sign-in, as `az login` records it.
        tenant = self.emu.options.tenant_id
        with open(os.path.join(config, "azureProfile.json"), "w") as f:
            json.dump({"installationId": "5d2b3c4e-0000-4000-8000-000000000001", "subscriptions": [{
                "id": "aaaaaaaa-0000-4000-8000-000000000001", "name": "own subscription", "state": "Enabled",
                "user": {"name": "me@example.test", "type": "user"}, "isDefault": True, "tenantId": tenant,
                "environmentName": "TokenbrokerTest", "homeTenantId": tenant, "managedByTenants": []}]}, f)

        def snapshot():
            files = {}
            for directory, _, names in os.walk(config):
                for name in names:
                    path = os.path.join(directory, name)
                    with open(path, "rb") as f:
                        files[os.path.relpath(path, config)] = hashlib.sha256(f.read()).hexdigest()
            return files

        before = snapshot()
        r = self.sh("az login --identity --output json", env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([s["user"]["type"] for s in json.loads(r.stdout)], ["servicePrincipal"])
        self.assertEqual(snapshot(), before, "exec changed the user's own Azure CLI files")
        self.assertEqual([n for n in os.listdir(os.path.join(self.runtime, "tokenbroker")) if n.startswith("azure-")], [])
        r = self.run_cmd([az, "account", "show", "--output", "json"], env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["user"], {"name": "me@example.test", "type": "user"})
