"""Azure Container Registry through `docker-credential-tokenbroker` (interface.md §5): Debian's
`skopeo` copies an image into and out of Debian's `docker-registry` (distribution, token
authentication, TLS) behind an ACR-like front (acr_registry.py) whose `/oauth2/exchange` accepts
only tokens the identity provider emulator issued. skopeo finds the helper through `credHelpers` in
`$XDG_RUNTIME_DIR/containers/auth.json`, as the README says."""
import gzip
import io
import json
import os
import shutil
import subprocess
import tarfile
import time
import unittest

from acr_registry import ACRRegistry, USERNAME, digest
from flows import GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET
from harness import TOKENBROKER, BrokerTestCase, cert_dir
from sdk_venv import venv_python

HELPER = "docker-credential-tokenbroker"
LAYERS = 30
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def write_oci_layout(path, layers=LAYERS, tag="v1"):
    """An OCI image layout (as the OCI image-spec defines it) of `layers` one-file layers, by hand."""
    blobs = os.path.join(path, "blobs", "sha256")
    os.makedirs(blobs)

    def put(data):
        d = digest(data)
        with open(os.path.join(blobs, d.split(":")[1]), "wb") as f:
            f.write(data)
        return {"digest": d, "size": len(data)}

    descriptors, diff_ids = [], []
    for i in range(layers):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            content = ("layer %d\n" % i).encode()
            info = tarfile.TarInfo("file-%02d.txt" % i)
            info.size, info.mtime = len(content), 0
            tar.addfile(info, io.BytesIO(content))
        diff_ids.append(digest(buf.getvalue()))
        # Compressed already, so skopeo pushes the very blobs (it compresses plain tar layers).
        descriptors.append(dict(put(gzip.compress(buf.getvalue(), mtime=0)), mediaType=OCI_LAYER))
    config = put(json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                             "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode())
    manifest = put(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                               "config": dict(config, mediaType="application/vnd.oci.image.config.v1+json"),
                               "layers": descriptors}).encode())
    with open(os.path.join(path, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    with open(os.path.join(path, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [dict(
            manifest, mediaType="application/vnd.oci.image.manifest.v1+json",
            annotations={"org.opencontainers.image.ref.name": tag})]}, f)
    return [d["digest"] for d in descriptors]


def layer_digests(path):
    with open(os.path.join(path, "index.json")) as f:
        manifest_digest = json.load(f)["manifests"][0]["digest"]
    with open(os.path.join(path, "blobs", "sha256", manifest_digest.split(":")[1])) as f:
        return [d["digest"] for d in json.load(f)["layers"]]


@unittest.skipUnless(shutil.which("skopeo") and shutil.which("docker-registry"),
                     "needs Debian's skopeo and docker-registry (make deps)")
class ACRRegistryTest(BrokerTestCase):
    # Entra's access tokens are JWTs; the exchange names their `tid` as the tenant.
    emulator_options = {"azure_jwt_access_tokens": True}
    refresh_lifetime = 3 * 3600

    def setUp(self):
        super().setUp()
        self.acr = ACRRegistry(self.emu, cert_dir(), self.tmp, refresh_lifetime=self.refresh_lifetime).start()
        self.addCleanup(self.acr.stop)
        self.write_config(self.default_config() + "\n[host %s]\naccount = work\nregistry = acr\n" % self.acr.host)
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        os.symlink(TOKENBROKER, os.path.join(self.bin, HELPER))
        auth = os.path.join(self.runtime, "containers", "auth.json")
        os.makedirs(os.path.dirname(auth))
        with open(auth, "w") as f:
            json.dump({"credHelpers": {self.acr.host: "tokenbroker"}}, f)
        self.certs = os.path.join(self.tmp, "registry-certs")
        os.makedirs(self.certs)
        shutil.copy(self.ca_file, os.path.join(self.certs, "ca.crt"))
        self.policy = os.path.join(self.tmp, "policy.json")
        with open(self.policy, "w") as f:
            json.dump({"default": [{"type": "insecureAcceptAnything"}]}, f)

    def helper_env(self):
        return self.env(PATH=self.bin + ":" + os.environ.get("PATH", "/usr/bin:/bin"))

    def sign_in(self):
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)

    def skopeo(self, *args, timeout=180):
        return subprocess.run(["skopeo", "--policy", self.policy, *args], capture_output=True,
                              env=self.helper_env(), timeout=timeout)

    def copy_in(self, source, ref="demo:v1"):
        return self.skopeo("copy", "--dest-cert-dir", self.certs, "oci:%s:v1" % source,
                           "docker://%s/%s" % (self.acr.host, ref))

    def copy_out(self, target, ref="demo:v1"):
        return self.skopeo("copy", "--src-cert-dir", self.certs, "docker://%s/%s" % (self.acr.host, ref),
                           "oci:%s:v1" % target)

    def helper_get(self):
        return self.run_broker("get", input=self.acr.host, argv0=HELPER)

    def refresh_token_items(self):
        """The attributes of each stored refresh token (a refresh may rotate its secret)."""
        return [i["attributes"] for i in self.keyring_items() if i["attributes"].get("kind") == "refresh-token"]


class CopyTest(ACRRegistryTest):
    def test_skopeo_copies_in_and_out_with_one_exchange(self):
        """30 layers pushed and pulled (over 60 blob requests) through the helper named in
        `credHelpers`: one exchange of an emulator-issued token, whose registry token then
        serves every request for it."""
        self.sign_in()
        source = os.path.join(self.tmp, "image")
        layers = write_oci_layout(source)
        r = self.copy_in(source)
        self.assertEqual(r.returncode, 0, r.stderr.decode() + self.acr.log())
        target = os.path.join(self.tmp, "pulled")
        r = self.copy_out(target)
        self.assertEqual(r.returncode, 0, r.stderr.decode() + self.acr.log())
        self.assertEqual(layer_digests(target), layers)
        r = self.skopeo("inspect", "--cert-dir", self.certs, "docker://%s/demo:v1" % self.acr.host)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(json.loads(r.stdout)["Layers"], layers)
        for _ in range(5):
            self.assertEqual(self.helper_get().returncode, 0)
        self.assertGreaterEqual(self.acr.count("blobs"), 2 * LAYERS)
        self.assertEqual(self.acr.count("exchanges"), 1, self.acr.exchanges)
        exchange = self.acr.exchanges[0]
        self.assertEqual((exchange["grant_type"], exchange["service"]), ("access_token", self.acr.host))
        # The registry's realm was asked with the helper's username and the registry token only.
        self.assertTrue(self.acr.token_requests)
        self.assertTrue(all(ok for _, _, ok in self.acr.token_requests), self.acr.token_requests)

    def test_get_prints_the_acr_username_and_a_registry_token_never_the_entra_token(self):
        self.sign_in()
        r = self.run_broker("get", input=self.acr.host, argv0=HELPER, env=self.env(TOKENBROKER_VERBOSE="1"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(b"exchanged the token of 'work' for a registry token of '%s'" % self.acr.host.encode(), r.stderr)
        verbose = r.stderr
        r = self.helper_get()
        self.assertEqual((r.returncode, r.stderr), (0, b""), r.stdout)
        reply = json.loads(r.stdout)
        access = self.run_broker("token", "get", "work", "--scope", "https://containerregistry.azure.net/.default")
        self.assert_no_leak(reply["Secret"], access.stdout.strip().decode(), outputs=[verbose])
        self.assertEqual(reply["ServerURL"], self.acr.host)
        self.assertEqual(reply["Username"], USERNAME)
        self.assertIn(reply["Secret"], self.acr.issued)
        self.assertIsNone(self.emu.validate_access_token(reply["Secret"]))
        # Kept in the agent's memory, never in the keyring.
        again = json.loads(self.helper_get().stdout)["Secret"]
        self.assertEqual(again, reply["Secret"])
        self.assertEqual(self.acr.count("exchanges"), 1)
        for item in self.keyring_items():
            self.assertNotIn(reply["Secret"], json.dumps(item))


class ExpiryTest(ACRRegistryTest):
    # Kept until five minutes before exp: 8 s here.
    refresh_lifetime = 300 + 8

    def test_after_the_registry_tokens_expiry_the_next_copy_exchanges_again_silently(self):
        self.sign_in()
        first = self.helper_get()
        self.assertEqual(first.returncode, 0, first.stdout)
        self.assertEqual(json.loads(self.helper_get().stdout)["Secret"], json.loads(first.stdout)["Secret"])
        self.assertEqual(self.acr.count("exchanges"), 1)
        time.sleep(9)
        source = os.path.join(self.tmp, "image")
        write_oci_layout(source, layers=2)
        r = self.copy_in(source)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(self.acr.count("exchanges"), 2, self.acr.exchanges)
        self.assertNotIn(b"tokenbroker", r.stderr)


class FailureTest(ACRRegistryTest):
    def test_exchange_401_is_exit_3_naming_the_login_and_nothing_is_deleted(self):
        """The registry refuses a token the emulator no longer holds valid (revoked): exit 3,
        our message on stdout (where skopeo reads it) and stderr; the refresh token stays."""
        self.sign_in()
        r = self.run_broker("token", "get", "work", "--scope", "https://containerregistry.azure.net/.default")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.emu.revoke(r.stdout.strip().decode())
        items = self.refresh_token_items()
        self.assertEqual(len(items), 1)
        r = self.helper_get()
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn(b"tokenbroker login work", r.stdout)
        self.assertEqual(r.stdout, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 1)
        source = os.path.join(self.tmp, "image")
        write_oci_layout(source, layers=1)
        r = self.copy_in(source)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"tokenbroker login work", r.stderr)
        self.assertEqual(self.refresh_token_items(), items)

    def test_Y05_a_401_names_another_tenant_and_the_host_group_too(self):
        """A registry in another tenant answers the exchange with 401 like a revoked sign-in does:
        exit 3, one line naming the login and the other possibility, with the `[host …]` line
        that serves the registry with another account; nothing deleted."""
        self.sign_in()
        items = self.refresh_token_items()
        self.acr.exchange_status = 401
        r = self.helper_get()
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 1)
        self.assertIn(b"tokenbroker login work", r.stdout)
        self.assertIn(b"another tenant", r.stdout)
        self.assertIn(("[host %s] account = " % self.acr.host).encode(), r.stdout)
        self.assertEqual(self.refresh_token_items(), items)

    def test_404_names_the_host_and_5xx_429_or_a_page_is_never_a_sign_out(self):
        self.sign_in()
        items = self.refresh_token_items()
        cases = [(404, None, 1, self.acr.host.encode()), (503, None, 4, b"try again later"),
                 (429, None, 4, b"try again later"), (200, "<html><body>proxy sign-in</body></html>", 4, b"refresh_token")]
        for status, body, code, text in cases:
            with self.subTest(status=status, body=body):
                self.acr.exchange_status, self.acr.exchange_body = status, body
                r = self.helper_get()
                self.assertEqual(r.returncode, code, r.stdout)
                self.assertIn(text, r.stdout)
                self.assertEqual(r.stdout, r.stderr)
                self.assertNotIn(b"tokenbroker login", r.stdout)
        self.assertEqual(self.refresh_token_items(), items)
        self.acr.exchange_status = self.acr.exchange_body = None
        r = self.helper_get()
        self.assertEqual(r.returncode, 0, r.stdout)


if __name__ == "__main__":
    unittest.main()


class DockerPyTest(ACRRegistryTest):
    """docker-py (from PyPI) collects every registry's credentials before a build
    (`load_config(...).get_all_credentials()`): `list` then `get` for each host of a `credsStore`,
    and `get` for each `credHelpers` entry. Any helper reply without the phrase `credentials not
    found in native keychain` raises, and the build fails, whatever registries it needed."""

    def setUp(self):
        super().setUp()
        google = self.emu.base_url + "/google"
        self.write_config(self.default_config() + f"""
[host {self.acr.host}]
account = work
registry = acr

[account gcp]
provider = google
client-id = {GOOGLE_CLIENT_ID}
client-secret = {GOOGLE_CLIENT_SECRET}
scopes = openid email https://www.googleapis.com/auth/cloud-platform
authorization-endpoint = {google}/o/oauth2/v2/auth
token-endpoint = {google}/token
hosts = europe-west1-docker.pkg.dev
""")

    def all_credentials(self, docker_config):
        python = venv_python("docker", ["docker"])
        path = os.path.join(self.tmp, "docker-config.json")
        with open(path, "w") as f:
            json.dump(docker_config, f)
        script = ("import json, sys, docker.auth\n"
                  "env = json.loads(sys.argv[2])\n"
                  "creds = docker.auth.load_config(sys.argv[1], credstore_env=env).get_all_credentials()\n"
                  "print(json.dumps(creds))\n")
        env = self.helper_env()
        r = subprocess.run([python, "-c", script, path, json.dumps(env)], capture_output=True, env=env, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        return json.loads(r.stdout)

    def test_Y12_one_signed_out_account_does_not_break_the_other_registries(self):
        """The azure account signed in (its ACR host), the google one not (Artifact Registry):
        through `credHelpers` and through `credsStore`, docker-py returns both keys without
        raising, the ACR entry holding a registry token and the signed-out one none; a direct `get`
        for the signed-out host prints one stdout line that begins with the not-found phrase and
        names `tokenbroker login gcp`, exit 3."""
        self.sign_in()
        ar = "europe-west1-docker.pkg.dev"
        for docker_config in ({"credHelpers": {self.acr.host: "tokenbroker", ar: "tokenbroker"}},
                              {"credsStore": "tokenbroker"}):
            with self.subTest(config=docker_config):
                creds = self.all_credentials(docker_config)
                acr = creds[self.acr.host]
                self.assertEqual(acr["Username"], USERNAME)
                with self.acr.lock:
                    self.assertIn(acr["Password"], self.acr.issued)
                self.assertIn(ar, creds)
                self.assertIsNone(creds[ar])
        r = self.run_broker("get", input=ar, argv0=HELPER)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count(b"\n"), 1, r.stdout)
        self.assertTrue(r.stdout.startswith(b"credentials not found in native keychain (tokenbroker: "), r.stdout)
        self.assertIn(b"tokenbroker login gcp", r.stdout)
        self.assertEqual(self.acr.count("exchanges"), 1, self.acr.exchanges)
