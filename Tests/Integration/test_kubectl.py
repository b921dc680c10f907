"""The real `kubectl` with tokenbroker as its exec credential plugin (interface.md §3,
`exec-credential`): kubeconfigs whose `exec.apiVersion` is `client.authentication.k8s.io/v1` and
`…/v1beta1` (the one most generated kubeconfigs still carry) both reach a small HTTPS API server on
loopback that answers only requests bearing a token the emulator validates.

kubectl is not a Debian package: the test skips, naming what is missing, when it is not on PATH."""
import http.server
import json
import os
import shutil
import ssl
import threading
import time
import unittest
import subprocess

from flows import BrowserFlows, FlowTestCase
from harness import BrokerTestCase

KUBECTL = shutil.which("kubectl")
WHOAMI = "/apis/tokenbroker.test/v1/whoami"

class _APIHandler(http.server.BaseHTTPRequestHandler):
    """GET `WHOAMI` answers 200 with the token's subject when the bearer token validates at the
    emulator, else 401 with a Kubernetes `Status`, as an API server does."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        claims = self.server.validate(auth[7:]) if auth.startswith("Bearer ") else None
        if claims and self.path == WHOAMI:
            self.server.accepted += 1
            status, doc = 200, {"kind": "WhoAmI", "sub": claims.get("sub")}
        elif claims:
            status, doc = 404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}
        else:
            status, doc = 401, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                "reason": "Unauthorized", "message": "Unauthorized", "code": 401}
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@unittest.skipIf(KUBECTL is None, "kubectl is not on PATH (not a Debian package; install it to run the "
                                  "real-kubectl exec-plugin tests)")
class KubectlExecPluginTest(BrokerTestCase):
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _APIHandler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        certs = os.path.dirname(self.ca_file)
        ctx.load_cert_chain(os.path.join(certs, "server.pem"), os.path.join(certs, "server.key"))
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        server.validate, server.accepted = self.emu.validate_access_token, 0
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.server = server

    def kubectl(self, user=None, api_version=None):
        path = self.write_kubeconfig("https://127.0.0.1:%d" % self.server.server_address[1], user=user,
                                     api_version=api_version, ca=self.ca_file)
        return subprocess.run([KUBECTL, "--kubeconfig", path, "get", "--raw", WHOAMI],
                              capture_output=True, env=self.env(), timeout=120)

    def test_both_api_versions_reach_the_api_server(self):
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)
        for version in ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"):
            with self.subTest(version=version):
                before = self.server.accepted
                r = self.kubectl(api_version=version)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(json.loads(r.stdout)["kind"], "WhoAmI")
                self.assertEqual(self.server.accepted, before + 1)

    def test_the_api_server_refuses_other_tokens(self):
        """The control: the same server turns away a bearer token the emulator did not issue,
        so the test above passes only with tokenbroker's token."""
        r = self.kubectl("    token: not-a-token-from-the-emulator")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"Unauthorized", r.stderr)
        self.assertEqual(self.server.accepted, 0)


@unittest.skipIf(KUBECTL is None, "kubectl is not on PATH (not a Debian package; install it to run the "
                                  "real-kubectl exec-plugin tests)")
class KubectlOIDCClusterTest(BrowserFlows, FlowTestCase):
    """bug-cases-3.md X08 step 4: an API server that validates OpenID Connect ID tokens (FKA:
    a JWT from the emulator's generic OpenID Provider with its `iss`, `aud` = the client and a
    future `exp`) is reached through kubectl with `kube-token = id`, also after the first ID
    token expired, with no user action."""
    emulator_options = {"auto_consent": True, "device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.issuer = self.emu.base_url + "/realms/kube"
        self.emu.oidc.configure(path="/realms/kube")
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _APIHandler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        certs = os.path.dirname(self.ca_file)
        ctx.load_cert_chain(os.path.join(certs, "server.pem"), os.path.join(certs, "server.key"))
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        server.validate, server.accepted = self.validate_id_token, 0
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.server = server

    def validate_id_token(self, token):
        import base64
        try:
            payload = token.split(".")[1]
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except (IndexError, ValueError):
            return None
        ok = claims.get("iss") == self.issuer and claims.get("aud") == "kube" and claims.get("exp", 0) > time.time()
        return claims if ok else None

    def test_X08_kubectl_reaches_an_oidc_cluster_with_the_id_token(self):
        self.write_config(f"""[broker]
ca-file = {self.ca_file}
login-timeout = 30

[account work]
provider = oidc
issuer = {self.issuer}
client-id = kube
flow = device-code
kube-token = id
""")
        # The sign-in's ID token lives 20 s (the access token an hour); the next one an hour.
        first_exp = int(time.time()) + 20
        self.emu.oidc.script_id_tokens([{"exp": first_exp}])
        p = self.start_login("work")
        dc = self.wait_for_device_code(0, endpoint="oidc.devicecode")
        self.emu.approve(dc["user_code"])
        r = self.finish(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        path = self.write_kubeconfig("https://127.0.0.1:%d" % self.server.server_address[1], ca=self.ca_file)

        def kubectl():
            return subprocess.run([KUBECTL, "--kubeconfig", path, "get", "--raw", WHOAMI],
                                  capture_output=True, env=self.env(), timeout=120)
        first = kubectl()
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertEqual(self.server.accepted, 1)
        refreshes = len(self.emu.requests(endpoint="oidc.token"))
        time.sleep(max(0, first_exp - time.time() + 1))  # the first ID token has expired
        second = kubectl()
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertEqual(self.server.accepted, 2)
        refresh = [q for q in self.emu.requests(endpoint="oidc.token")[refreshes:]
                   if q["form"].get("grant_type") == "refresh_token"]
        self.assertEqual(len(refresh), 1)
        self.assertIn("openid", refresh[0]["form"].get("scope", "").split())
        # The default format still prints the access token, which this cluster refuses.
        t = self.run_broker("token", "get", "work")
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertIsNone(self.validate_id_token(t.stdout.decode().strip()))


if __name__ == "__main__":
    unittest.main()
