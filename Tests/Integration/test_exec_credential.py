"""`token get --format exec-credential`: a kubectl / client-go exec plugin credential,
`client.authentication.k8s.io/v1` ExecCredential (interface.md §3; protocols.md §7.2),
checked field by field and through a real client (the Kubernetes Python client's exec provider,
Debian's python3-kubernetes, when installed)."""
import calendar
import datetime
import json
import os
import re
import subprocess
import time
import unittest

from harness import KUBE_V1 as V1, SYSTEM_PYTHON, TOKENBROKER, BrokerTestCase

V1BETA1 = "client.authentication.k8s.io/v1beta1"


def exec_info(api_version):
    """KUBERNETES_EXEC_INFO as kubectl sets it for a plugin of `api_version`."""
    return json.dumps({"kind": "ExecCredential", "apiVersion": api_version, "spec": {"interactive": False}})


EXEC_INFO = exec_info(V1)

# Loads the kubeconfig as kubectl's Python sibling does: runs the exec plugin, checks its
# apiVersion/kind/status, and keeps the bearer token and the parsed expirationTimestamp.
LOAD = """import json, os, sys, yaml
from kubernetes import client
from kubernetes.config.kube_config import KubeConfigLoader
c = client.Configuration()
loader = KubeConfigLoader(config_dict=yaml.safe_load(open(sys.argv[1])),
                          config_base_path=os.path.dirname(sys.argv[1]))
loader.load_and_set(c)
print(json.dumps({"authorization": c.api_key.get("authorization"),
                  "expiry": loader.expiry.isoformat() if loader.expiry else None}))
"""


class ExecCredentialTest(BrokerTestCase):
    emulator_options = {"device_code_interval": 1}

    def sign_in(self):
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)

    def test_fields(self):
        """apiVersion, kind, status.token (accepted by the provider), status.expirationTimestamp
        (RFC 3339 UTC, `Z`, whole seconds) equal to the token's expiry at the emulator and to
        `--format json`'s expires_on; nothing else; run as kubectl runs it (KUBERNETES_EXEC_INFO,
        no terminal)."""
        self.sign_in()
        r = self.run_broker("token", "get", "work", "--format", "exec-credential",
                            env=self.env(KUBERNETES_EXEC_INFO=EXEC_INFO))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, b"")
        doc = json.loads(r.stdout)
        self.assertEqual(set(doc), {"apiVersion", "kind", "status"})
        self.assertEqual(doc["apiVersion"], "client.authentication.k8s.io/v1")
        self.assertEqual(doc["kind"], "ExecCredential")
        status = doc["status"]
        self.assertEqual(set(status), {"token", "expirationTimestamp"})
        claims = self.emu.validate_access_token(status["token"])
        self.assertTrue(claims)
        stamp = status["expirationTimestamp"]
        self.assertRegex(stamp, r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
        expiry = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
        # Counted from when the token request was sent (expires_in counts from the provider's
        # answer), so never after the JWT's own exp, and a second or two before it on a slow run.
        self.assertLessEqual(expiry, claims["exp"])
        self.assertGreaterEqual(expiry, claims["exp"] - 5)
        j = json.loads(self.run_broker("token", "get", "work", "--format", "json").stdout)
        self.assertEqual((j["access_token"], j["expires_on"]), (status["token"], expiry))
        self.assertGreater(expiry, time.time() + 300)

    def test_answers_in_the_version_kubectl_names(self):
        """v1beta1 when KUBERNETES_EXEC_INFO names it, v1 when it names v1 or is absent; through
        the agent (which runs the command in its own environment) and without it."""
        self.sign_in()
        for agent in ("auto", "off"):
            self.write_config(self.default_config(extra_broker="agent = " + agent))
            for info, want in ((exec_info(V1BETA1), V1BETA1), (exec_info(V1), V1), (None, V1)):
                with self.subTest(agent=agent, info=info):
                    r = self.run_broker("token", "get", "work", "--format", "exec-credential",
                                        env=self.env(KUBERNETES_EXEC_INFO=info))
                    self.assertEqual(r.returncode, 0, r.stderr)
                    doc = json.loads(r.stdout)
                    self.assertEqual((doc["apiVersion"], doc["kind"]), (want, "ExecCredential"))
                    self.assertTrue(self.emu.validate_access_token(doc["status"]["token"]))

    def test_another_version_is_an_error_naming_the_supported_ones(self):
        """v1alpha1 (removed from kubectl in 1.24), a future version, or a variable that is not an
        ExecCredential: exit 64, one line naming both supported versions, nothing on stdout, and
        no token requested."""
        self.sign_in()
        before = len(self.emu.requests(grant_type="refresh_token"))
        for info in (exec_info("client.authentication.k8s.io/v1alpha1"), exec_info("client.authentication.k8s.io/v2"),
                     "not json", json.dumps({"kind": "ExecCredential"})):
            with self.subTest(info=info):
                r = self.run_broker("token", "get", "work", "--format", "exec-credential", "--force-refresh",
                                    env=self.env(KUBERNETES_EXEC_INFO=info))
                self.assertEqual((r.returncode, r.stdout), (64, b""), r.stderr)
                lines = r.stderr.decode().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertTrue(lines[0].startswith("tokenbroker: KUBERNETES_EXEC_INFO"), lines[0])
                self.assertIn(V1 + " ", lines[0])
                self.assertIn(V1BETA1, lines[0])
        self.assertEqual(len(self.emu.requests(grant_type="refresh_token")), before)

    def test_not_signed_in_exits_3_with_nothing_on_stdout(self):
        r = self.run_broker("token", "get", "work", "--format", "exec-credential",
                            env=self.env(KUBERNETES_EXEC_INFO=EXEC_INFO))
        self.assertEqual((r.returncode, r.stdout), (3, b""))
        self.assertIn(b"tokenbroker login work", r.stderr)

    def test_kubernetes_python_client_accepts_it(self):
        """The Kubernetes client's exec provider runs the plugin from a kubeconfig, checks
        apiVersion/kind/status and reads the bearer token and the expiry."""
        probe = subprocess.run([SYSTEM_PYTHON, "-c", "import kubernetes"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("python3-kubernetes is not installed (make deps installs it)")
        self.sign_in()
        path = self.write_kubeconfig("https://127.0.0.1:6443")
        r = subprocess.run([SYSTEM_PYTHON, "-c", LOAD, path], capture_output=True, env=self.env(), timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout.decode().strip().splitlines()[-1])
        token = re.fullmatch(r"Bearer (.+)", got["authorization"]).group(1)
        claims = self.emu.validate_access_token(token)
        self.assertTrue(claims)
        # tokenbroker counts expires_in from when the reply arrived, the emulator's exp from when it
        # issued the token: a second apart on a loaded machine.
        expiry = datetime.datetime.fromisoformat(got["expiry"]).timestamp()
        self.assertLessEqual(abs(expiry - claims["exp"]), 5, got["expiry"])


if __name__ == "__main__":
    unittest.main()
