"""`docker-credential-tokenbroker` (a link to the front, which acts on its name) speaking the
docker credential helper protocol (interface.md §5; protocols.md §7.1;
docker/docker-credential-helpers `credentials/credentials.go`): field by field, against the
emulator and a real keyring."""
import json
import os
import shutil
import subprocess
import unittest

from harness import TOKENBROKER, BrokerTestCase

NAME = "docker-credential-tokenbroker"
HOSTS = ("git.example.test europe-west1-docker.pkg.dev registry.example.test:5000 myreg.azurecr.io"
         " *.pkg.example.test")


class DockerHelperTest(BrokerTestCase):
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        config = self.default_config().replace("hosts = git.example.test", "hosts = " + HOSTS)
        self.write_config(config + "\n[host dev.example.test]\naccount = work\nusername = dev-user\n")

    def docker(self, action, input=b""):
        return self.run_broker(action, input=input, argv0=NAME)

    def sign_in(self):
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)

    def reply(self, r):
        """The JSON object on stdout as (key, value) pairs in their order."""
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stderr, b"")
        self.assertTrue(r.stdout.endswith(b"\n"))
        return json.loads(r.stdout, object_pairs_hook=lambda pairs: pairs)

    def test_get_answers_server_url_username_secret(self):
        """`get`: ServerURL as sent (trimmed), Username (the host's, else the signed-in
        identity), Secret an access token the provider accepts; any URL form of the registry."""
        self.sign_in()
        cases = [
            ("https://europe-west1-docker.pkg.dev", "user1@example.test"),
            ("europe-west1-docker.pkg.dev\n", "user1@example.test"),
            ("https://Registry.Example.TEST:5000/v2/", "user1@example.test"),
            ("registry.example.test:5000", "user1@example.test"),
            ("https://eu.pkg.example.test/v2/project", "user1@example.test"),
            ("https://dev.example.test", "dev-user"),
        ]
        secrets = set()
        for url, username in cases:
            with self.subTest(url=url):
                pairs = self.reply(self.docker("get", url))
                self.assertEqual([k for k, _ in pairs], ["ServerURL", "Username", "Secret"])
                d = dict(pairs)
                self.assertEqual(d["ServerURL"], url.strip())
                self.assertEqual(d["Username"], username)
                self.assertTrue(self.emu.validate_access_token(d["Secret"]))
                secrets.add(d["Secret"])
        # One account, one scope set: one cached token served every registry.
        self.assertEqual(len(secrets), 1)
        self.assertEqual(self.run_broker("token", "get", "work").stdout.strip().decode(), secrets.pop())

    def test_not_found_is_the_protocol_reply_with_status_1(self):
        """A registry no account serves: exactly `credentials not found in native keychain` on
        stdout (docker compares the trimmed text), status 1, nothing asked of the provider."""
        self.sign_in()
        before = len(self.emu.requests())
        for url in ("https://index.docker.io/v1/", "registry.example.test", "registry.example.test:5001",
                    "pkg.example.test", "https://evilgit.example.test"):
            with self.subTest(url=url):
                r = self.docker("get", url)
                self.assertEqual((r.returncode, r.stdout, r.stderr),
                                 (1, b"credentials not found in native keychain\n", b""))
        self.assertEqual(len(self.emu.requests()), before)

    def test_list_shows_configured_hosts_and_usernames(self):
        self.sign_in()
        pairs = self.reply(self.docker("list"))
        self.assertEqual(dict(pairs), {
            "https://dev.example.test": "dev-user",
            "https://git.example.test": "user1@example.test",
            "https://europe-west1-docker.pkg.dev": "user1@example.test",
            "https://registry.example.test:5000": "user1@example.test",
            "https://myreg.azurecr.io": "00000000-0000-0000-0000-000000000000",
        })

    def test_Y13_store_and_erase_for_a_served_registry_are_ignored(self):
        """`store` (a JSON document) and `erase` (a server URL) for a registry an account serves
        (`az acr login` runs `docker login` for it) exit 0 silently; nothing changes: the next
        `get` hands out the same token."""
        self.sign_in()
        first = dict(self.reply(self.docker("get", "europe-west1-docker.pkg.dev")))["Secret"]
        items = self.keyring_items()
        for action, body in (("store", json.dumps({"ServerURL": "https://europe-west1-docker.pkg.dev",
                                                   "Username": "u", "Secret": "S_SENTINEL"})),
                             ("store", json.dumps({"ServerURL": "myreg.azurecr.io", "Username": "u",
                                                   "Secret": "S_SENTINEL"})),
                             ("erase", "https://europe-west1-docker.pkg.dev\n")):
            with self.subTest(action=action, body=body):
                r = self.docker(action, body)
                self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        self.assertEqual(self.keyring_items(), items)
        again = dict(self.reply(self.docker("get", "europe-west1-docker.pkg.dev")))["Secret"]
        self.assertEqual(again, first)

    def test_Y13_store_for_any_other_registry_fails_and_keeps_the_password_nowhere(self):
        """As docker's `credsStore`, tokenbroker is handed every `docker login`'s password: for a
        registry no account serves, `store` (and `erase`) exit 1 with one line on stdout, where
        docker shows it, saying it keeps no registry passwords and belongs in `credHelpers`; the
        password is found in no output, file, log or keyring item, even with --verbose."""
        sentinel = "S_SENTINEL_PASSWORD_Y13"
        self.sign_in()
        outputs = []
        for env in (self.env(), self.env(TOKENBROKER_VERBOSE="1")):
            for action, body in (("store", json.dumps({"ServerURL": "https://index.docker.io/v1/",
                                                       "Username": "someone", "Secret": sentinel})),
                                 ("erase", "https://index.docker.io/v1/\n")):
                with self.subTest(action=action, verbose="TOKENBROKER_VERBOSE" in env):
                    r = subprocess.run([self._docker_exe(), action], input=body.encode(), capture_output=True,
                                       env=env, timeout=60)
                    outputs += [r.stdout, r.stderr]
                    self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                    self.assertEqual(r.stdout.count(b"\n"), 1, r.stdout)
                    self.assertTrue(r.stdout.startswith(
                        b"tokenbroker keeps no registry passwords, so the credential for 'index.docker.io' was not "),
                        r.stdout)
                    self.assertIn(b"credHelpers", r.stdout)
                    self.assertIn(b"not as credsStore", r.stdout)
                    self.assertIn(r.stdout, r.stderr)
        for r in (self.docker("store", "not json " + sentinel), self.docker("store", "")):
            self.assertEqual(r.returncode, 1)
            self.assertIn(b"names no registry", r.stdout)
            outputs += [r.stdout, r.stderr]
        self.assert_no_leak(sentinel, outputs=outputs)
        for root in (self.home, self.runtime):
            for dirpath, _, files in os.walk(root):
                for name in files:
                    path = os.path.join(dirpath, name)
                    try:
                        with open(path, "rb") as f:
                            self.assertNotIn(sentinel.encode(), f.read(), path)
                    except OSError:
                        pass  # sockets, vanished files

    def _docker_exe(self):
        exe = os.path.join(self.tmp, NAME)
        if not os.path.exists(exe):
            os.symlink(TOKENBROKER, exe)
        return exe

    def test_not_signed_in_and_bad_requests(self):
        """Errors go to stdout, where docker reads them, and to stderr: not signed in (status 3,
        names the login), no server URL (1), a usage line for a wrong argv (1)."""
        r = self.docker("get", "europe-west1-docker.pkg.dev")
        self.assertEqual(r.returncode, 3)
        self.assertIn(b"tokenbroker login work", r.stdout)
        self.assertEqual(r.stderr, r.stdout)
        r = self.docker("get", "\n")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (1, b"no credentials server URL\n", b"no credentials server URL\n"))
        for args in ((), ("frobnicate",), ("get", "extra")):
            with self.subTest(args=args):
                r = self.run_broker(*args, argv0=NAME)
                self.assertEqual(r.returncode, 1)
                self.assertIn(b"usage: docker-credential-tokenbroker", r.stdout)
        r = self.docker("version")
        self.assertEqual(r.returncode, 0)
        self.assertTrue(r.stdout.startswith(b"docker-credential-tokenbroker (tokenbroker) "))

    def test_the_fronts_own_errors_go_to_stdout_too(self):
        """A front that cannot run tokenbroker-core (installed without it) says so where docker
        reads it, on stdout, and on stderr; as `tokenbroker`, on stderr only."""
        lone = os.path.join(self.tmp, "lone")
        os.makedirs(lone)
        shutil.copy(TOKENBROKER, os.path.join(lone, NAME))
        shutil.copy(TOKENBROKER, os.path.join(lone, "tokenbroker"))
        r = subprocess.run([os.path.join(lone, NAME), "get"], input=b"europe-west1-docker.pkg.dev\n",
                           capture_output=True, env=self.env(), timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"cannot run", r.stdout)
        self.assertEqual(r.stdout, r.stderr)
        r = subprocess.run([os.path.join(lone, "tokenbroker"), "get"], input=b"protocol=https\nhost=git.example.test\n\n",
                           capture_output=True, env=self.env(), timeout=60)
        self.assertEqual((r.returncode, r.stdout), (1, b""))
        self.assertIn(b"cannot run", r.stderr)

    def test_secret_only_on_stdout(self):
        self.sign_in()
        r = self.docker("get", "europe-west1-docker.pkg.dev")
        secret = dict(self.reply(r))["Secret"]
        self.assert_no_leak(secret, outputs=[r.stderr])


if __name__ == "__main__":
    unittest.main()
