"""`tokenbroker exec` (interface.md §3, §9): COMMAND's environment, exit status, signals, and the two
endpoints at the protocol level with curl: the App Service managed identity protocol (2019-08-01)
and the Compute Engine metadata server, checked against the emulator; other users' processes,
unknown paths, oversized and slow requests. The SDKs themselves: test_exec_sdk.py.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from flows import BrowserFlows, FlowTestCase
from harness import TOKENBROKER

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
GRAPH = "https://graph.microsoft.com"
# Prints the endpoint variables and other credential variables as JSON, then exits with $1.
SHOW_ENV = ("import json, os, sys; print(json.dumps({k: v for k, v in os.environ.items() "
            "if k.startswith(('IDENTITY_', 'GCE_', 'GOOGLE_', 'AZURE_', 'MSI_', 'IMDS_'))})); sys.exit(int(sys.argv[1]))")
REMOVED = ["AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_FEDERATED_TOKEN_FILE",
           "GOOGLE_APPLICATION_CREDENTIALS", "MSI_ENDPOINT", "MSI_SECRET", "IDENTITY_SERVER_THUMBPRINT", "IMDS_ENDPOINT"]


class ExecTestCase(BrowserFlows, FlowTestCase):

    def exec(self, *command, accounts=("work",), env=None, timeout=60, verbose=False):
        """Runs `tokenbroker [--verbose] exec ACCOUNTS -- COMMAND`; returns CompletedProcess (bytes).
        Leak checks run it verbose: the quiet stderr would have nothing to grep."""
        return self.run_broker(*(["--verbose"] if verbose else []), "exec", *accounts, "--", *command,
                               env=env, timeout=timeout)

    def sh(self, script, accounts=("work",), env=None, timeout=60, verbose=False):
        """Runs `sh -c script` under exec; returns CompletedProcess (bytes)."""
        return self.exec("sh", "-c", script, accounts=accounts, env=env, timeout=timeout, verbose=verbose)

    def assert_no_exec_leak(self, r, identity_header=None):
        """No token, refresh token or device code, nor the IDENTITY_HEADER secret, on a verbose
        run's stderr (which must hold exec's request lines, or there was nothing to grep)."""
        self.assertIn(b"tokenbroker: exec: ", r.stderr, "not a --verbose run")
        self.assert_no_secret_leak(r, extra=[identity_header] if identity_header else [])

    def google_signed_in(self):
        self.write_config(self.default_config(extra_broker="agent = off")
                          + self.google_config(extra="project = proj-exec-1"))
        seen = len([r for r in self.emu.requests(endpoint="google.devicecode") if r["status"] == 200])
        p = self.start_login("g", "--device-code")
        dc = self.wait_for_device_code(seen, endpoint="google.devicecode")
        self.emu.approve(dc["user_code"])
        r = self.finish(p, 60)
        self.assertEqual(r.returncode, 0, r.stderr)


class ExecProcessTest(ExecTestCase):
    """What COMMAND gets and what tokenbroker returns; no sign-in needed."""

    def test_environment_exit_status_and_endpoint_closed_after(self):
        env = self.env(**{name: "stray" for name in REMOVED}, AZURE_TENANT_ID="kept")
        self.write_config(self.default_config() + self.google_config(extra="project = proj-exec-1"))
        r = self.exec(sys.executable, "-c", SHOW_ENV, "42", accounts=("work", "g"), env=env, verbose=True)
        self.assertEqual(r.returncode, 42, r.stderr)
        seen = json.loads(r.stdout)
        for name in REMOVED:
            self.assertNotIn(name, seen)
        self.assertEqual(seen["AZURE_TENANT_ID"], "kept")
        # DefaultAzureCredential tries no developer credential (az CLI, VS Code) of another identity.
        self.assertEqual(seen["AZURE_TOKEN_CREDENTIALS"], "prod")
        self.assertRegex(seen["IDENTITY_ENDPOINT"], r"^http://127\.0\.0\.1:\d+/msi/token$")
        self.assertGreaterEqual(len(seen["IDENTITY_HEADER"]), 40)
        host = seen["GCE_METADATA_HOST"]
        self.assertRegex(host, r"^127\.0\.0\.1:\d+$")
        self.assertEqual((seen["GCE_METADATA_IP"], seen["GCE_METADATA_ROOT"]), (host, host))
        self.assertEqual(seen["GOOGLE_CLOUD_PROJECT"], "proj-exec-1")
        self.assertIn(b"tokenbroker: exec: the Azure managed identity endpoint listens on 127.0.0.1:", r.stderr)
        self.assertNotIn(seen["IDENTITY_HEADER"].encode(), r.stderr)
        # Both endpoints are gone with COMMAND.
        for port in (int(seen["IDENTITY_ENDPOINT"].split(":")[2].split("/")[0]), int(host.split(":")[1])):
            with self.assertRaises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
        # A fresh secret every run.
        again = json.loads(self.exec(sys.executable, "-c", SHOW_ENV, "0",
                                     env=self.env(AZURE_TOKEN_CREDENTIALS="ManagedIdentityCredential")).stdout)
        self.assertNotEqual(again["IDENTITY_HEADER"], seen["IDENTITY_HEADER"])
        self.assertNotIn("GCE_METADATA_HOST", again)
        self.assertEqual(again["AZURE_TOKEN_CREDENTIALS"], "ManagedIdentityCredential")  # the parent's choice
        # Without an Azure account, a program's own Azure credential chain is left alone.
        alone = json.loads(self.exec(sys.executable, "-c", SHOW_ENV, "0", accounts=("g",)).stdout)
        self.assertNotIn("AZURE_TOKEN_CREDENTIALS", alone)

    def test_arguments_and_environment_reach_command_byte_for_byte(self):
        """As env(1) does: bytes that are not UTF-8, in COMMAND's arguments and in a variable,
        reach COMMAND unchanged (they came out as U+FFFD), through the front and the core."""
        self.write_config(self.default_config())
        env = {k.encode(): v.encode() for k, v in self.env().items()}
        env[b"TB_LATIN1"] = b"caf\xe9"
        script = 'printf "%s|%s" "$1" "$TB_LATIN1"'
        r = subprocess.run([TOKENBROKER, "exec", "work", "--", "sh", "-c", script, "sh", b"\xff\xfe x"],
                           env=env, capture_output=True, timeout=60)
        self.assertEqual((r.returncode, r.stdout), (0, b"\xff\xfe x|caf\xe9"), r.stderr)

    def test_death_by_signal_command_not_found_and_not_runnable(self):
        self.assertEqual(self.sh("kill -KILL $$").returncode, 128 + 9)
        self.assertEqual(self.sh("kill -USR1 $$").returncode, 128 + signal.SIGUSR1)
        self.assertEqual(self.sh("exit 0").returncode, 0)
        missing = self.exec("no-such-command-tb", "arg")
        self.assertEqual(missing.returncode, 127, missing.stderr)
        self.assertEqual(missing.stderr.decode().splitlines(),
                         ["tokenbroker: 'no-such-command-tb': No such file or directory; check the COMMAND after '--'"])
        plain = os.path.join(self.tmp, "not-executable")
        with open(plain, "w") as f:
            f.write("#!/bin/sh\n")
        denied = self.exec(plain)
        self.assertEqual(denied.returncode, 126, denied.stderr)
        self.assertIn(b"tokenbroker: '%s': Permission denied" % plain.encode(), denied.stderr)
        # COMMAND's own options and --help are its own.
        self.assertEqual(self.exec("sh", "-c", "exit 3", "--help").returncode, 3)

    def test_sigint_sigterm_and_sighup_are_passed_on(self):
        # The handler writes with os.write: a signal may arrive while print('ready') still runs.
        script = ("import os, signal, sys, time\n"
                  "def got(n, f):\n    os.write(1, b'got %d\\n' % n); os._exit(10 + n)\n"
                  "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP): signal.signal(s, got)\n"
                  "print('ready', flush=True)\ntime.sleep(60)\nsys.exit(1)\n")
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(signal=sig):
                p = subprocess.Popen([TOKENBROKER, "exec", "work", "--", sys.executable, "-c", script],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env())
                self.assertEqual(p.stdout.readline(), b"ready\n")
                p.send_signal(sig)
                out, err = p.communicate(timeout=30)
                self.assertEqual(p.returncode, 10 + sig, err)
                self.assertEqual(out, b"got %d\n" % sig)

    @unittest.skipUnless(os.geteuid() == 0, "needs root (another uid: setpriv)")
    def test_tokenbroker_is_not_dumpable_while_command_runs(self):
        """exec holds tokens and the IDENTITY_HEADER as long as COMMAND runs: like the agent, it
        is not dumpable (no core dump, no ptrace by the user's other processes), which the kernel
        shows by handing its /proc/PID files to root; COMMAND is dumpable again (execve). As
        uid 65534, so that root ownership tells."""
        front = self.binaries_for(NOBODY)
        home = tempfile.mkdtemp(prefix="tb-nobody-")
        self.addCleanup(shutil.rmtree, home, True)
        config = os.path.join(home, "config")
        with open(config, "w") as f:
            f.write("[broker]\nagent = off\nstore = file\n\n[account work]\nprovider = azure\nclient-id = c\n")
        for path in (home, config):
            os.chown(path, 65534, 65534)
        r = subprocess.run(NOBODY + [front, "--config", config, "exec", "work", "--", "sh", "-c",
                                     "stat -c %u /proc/$PPID/status /proc/$$/status"],
                           env={"PATH": os.environ["PATH"], "HOME": home, "XDG_RUNTIME_DIR": home},
                           capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode().split(), ["0", "65534"], r.stderr)

    def test_usage_errors(self):
        self.write_config(self.default_config() + self.google_config() + self.google_config(name="g2").replace("hosts =", "# hosts =")
                          + "\n[account work2]\nprovider = azure\nclient-id = x\n")
        for args, what in [(["work", "true"], "missing '--'"), (["--", "true"], "missing ACCOUNT"),
                           (["work", "--"], "missing COMMAND"), (["work", "g", "g2", "--", "true"], "unexpected argument"),
                           (["work", "work2", "--", "true"], "two azure accounts"),
                           (["g", "g2", "--", "true"], "two google accounts")]:
            with self.subTest(args=args):
                r = self.run_broker("exec", *args)
                self.assertEqual(r.returncode, 64, r.stderr)
                self.assertIn(what.encode(), r.stderr)
        self.assertEqual(self.run_broker("exec", "nobody", "--", "true").returncode, 64)


class AzureEndpointTest(ExecTestCase):
    """The App Service managed identity protocol with curl, the agent serving the tokens."""

    CURL = ('curl -s -o /dev/null -w "%{{http_code}}\\n" {headers} '
            '"$IDENTITY_ENDPOINT?api-version=2019-08-01&resource={resource}"')

    def test_tokens_for_resources_and_what_gets_nothing(self):
        self.signed_in()
        script = "\n".join([
            # 0: the secret, for the leak check
            'printf "%s\\n" "$IDENTITY_HEADER"',
            # 1-2: two resources, the body printed
            'curl -s -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" -H "Metadata: true" '
            '"$IDENTITY_ENDPOINT?api-version=2019-08-01&resource=https://management.azure.com/"; echo',
            'curl -s -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" '
            '"$IDENTITY_ENDPOINT?api-version=2019-08-01&resource=%s"; echo' % GRAPH,
            # 3-6: status codes only
            self.CURL.format(headers="", resource=GRAPH),
            self.CURL.format(headers='-H "X-IDENTITY-HEADER: wrong"', resource=GRAPH),
            'curl -s -o /dev/null -w "%{http_code}\\n" -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" '
            '"${IDENTITY_ENDPOINT%/msi/token}/other?api-version=2019-08-01&resource=r"',
            'curl -s -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" "$IDENTITY_ENDPOINT?resource=r"; echo',
        ])
        r = self.sh(script, verbose=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        header, *lines = r.stdout.decode().splitlines()
        mgmt, graph = json.loads(lines[0]), json.loads(lines[1])
        self.assertEqual(mgmt["resource"], "https://management.azure.com/")
        self.assertEqual(mgmt["token_type"], "Bearer")
        self.assertIsInstance(mgmt["expires_on"], str)
        for doc, resource in ((mgmt, "https://management.azure.com/"), (graph, GRAPH)):
            info = self.emu.validate_access_token(doc["access_token"])
            self.assertTrue(info and info["active"], info)
            self.assertIn(resource + "/.default", info["scope"])
            self.assertAlmostEqual(int(doc["expires_on"]), info["exp"], delta=2)
        self.assertEqual(lines[2:5], ["401", "401", "404"])
        self.assertEqual(json.loads(lines[5])["statusCode"], 400)
        self.assertIn(b"tokenbroker: exec: Azure managed identity: GET /msi/token -> 401", r.stderr)
        self.assert_no_exec_leak(r, header)

    def test_exec_starts_the_agent_as_the_front_does(self):
        """agent = auto and none running: exec starts one (it used only a running one), which
        serves the tokens; with `--config FILE` it starts none, as the front."""
        self.signed_in()
        self.kill_agent()
        get = ('curl -s -o /dev/null -w "%{http_code}" -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" '
               '"$IDENTITY_ENDPOINT?api-version=2019-08-01&resource=' + GRAPH + '"')
        config = self.config_path
        r = self.run_broker("--config", config, "exec", "work", "--", "sh", "-c", get)
        self.assertEqual((r.returncode, r.stdout), (0, b"200"), r.stderr)
        self.assertIsNone(self.agent_pid())
        r = self.sh(get, verbose=True)
        self.assertEqual((r.returncode, r.stdout), (0, b"200"), r.stderr)
        self.assertIn(b"tokenbroker: exec: started the agent at ", r.stderr)
        self.assertIsNotNone(self.agent_pid())

    def test_not_signed_in_answers_the_protocols_error_with_the_login_hint(self):
        r = self.sh('for i in 1 2; do curl -s -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" '
                    '"$IDENTITY_ENDPOINT?api-version=2019-08-01&resource=%s"; echo; done' % GRAPH)
        self.assertEqual(r.returncode, 0, r.stderr)
        for line in r.stdout.decode().splitlines():
            doc = json.loads(line)
            self.assertNotIn("access_token", doc)
            self.assertIn("tokenbroker login work", doc["message"])
        # One line on tokenbroker's stderr, not one per request.
        self.assertEqual(r.stderr.decode().splitlines(),
                         ["tokenbroker: 'work' is not signed in; run 'tokenbroker login work'"])

    def test_oversized_and_slow_requests_do_not_stall_the_endpoint(self):
        self.signed_in()
        client = ("import os, socket, time, urllib.request\n"
                  "host, port = os.environ['IDENTITY_ENDPOINT'].split('/')[2].split(':')\n"
                  "slow = socket.create_connection((host, int(port))); slow.sendall(b'GET /msi/token HTTP/1.1\\r\\n')\n"
                  "big = socket.create_connection((host, int(port)))\n"
                  "big.sendall(b'GET / HTTP/1.1\\r\\nX: ' + b'a' * 40000 + b'\\r\\n\\r\\n')\n"
                  "print(big.recv(100).split(b' ')[1].decode())\n"
                  "t = time.monotonic()\n"
                  "req = urllib.request.Request(os.environ['IDENTITY_ENDPOINT'] + "
                  "'?api-version=2019-08-01&resource=%s', headers={'X-IDENTITY-HEADER': os.environ['IDENTITY_HEADER']})\n"
                  "print(urllib.request.urlopen(req, timeout=30).status, time.monotonic() - t < 9)\n") % GRAPH
        r = self.exec(sys.executable, "-c", client)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode().splitlines(), ["431", "200 True"])

    def test_idle_connections_cannot_use_up_its_file_descriptors(self):
        """With RLIMIT_NOFILE at 128 and 150 idle connections, the real request is answered: the
        server holds at most half of what is left after 64 descriptors (for the peer check's
        /proc/net/tcp, the agent, the store, libcurl) and closes the one waiting longest to take a
        new one, so the peer check never fails for want of a descriptor."""
        self.signed_in()
        client = ("import os, resource, socket, time, urllib.request\n"
                  "resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))\n"
                  "host, port = os.environ['IDENTITY_ENDPOINT'].split('/')[2].split(':')\n"
                  "idle = [socket.create_connection((host, int(port))) for _ in range(150)]\n"
                  "t = time.monotonic()\n"
                  "req = urllib.request.Request(os.environ['IDENTITY_ENDPOINT'] + "
                  "'?api-version=2019-08-01&resource=%s', headers={'X-IDENTITY-HEADER': os.environ['IDENTITY_HEADER']})\n"
                  "print(urllib.request.urlopen(req, timeout=30).status, time.monotonic() - t < 9)\n") % GRAPH
        r = subprocess.run(["prlimit", "--nofile=128:4096", TOKENBROKER, "exec", "work", "--", sys.executable, "-c", client],
                           capture_output=True, env=self.env(), timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode().splitlines(), ["200 True"], r.stderr)

    @unittest.skipUnless(os.geteuid() == 0, "needs root (another uid: setpriv)")
    def test_another_uid_gets_nothing(self):
        """Another user's connection is closed before a byte is read: curl sees an empty reply
        (52) or a reset (56); the user's own curl is answered. (/usr/bin/curl: the checkout's directory may not be
        enterable by uid 65534.)"""
        self.signed_in()
        script = ('%s /usr/bin/curl -s -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" '
                  '"$IDENTITY_ENDPOINT?api-version=2019-08-01&resource=%s"; echo "other=$?"; '
                  'curl -s -o /dev/null -w "own=%%{http_code}\\n" -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" '
                  '"$IDENTITY_ENDPOINT?api-version=2019-08-01&resource=%s"' % (" ".join(NOBODY), GRAPH, GRAPH))
        r = self.run_broker("--verbose", "exec", "work", "--", "sh", "-c", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        other, own = r.stdout.decode().splitlines()
        self.assertIn(other, ("other=52", "other=56"))  # empty reply, or reset: nothing either way
        self.assertEqual(own, "own=200")
        self.assertIn(b"refused a connection to the Azure managed identity endpoint from uid 65534", r.stderr)


class GoogleEndpointTest(ExecTestCase):
    """The metadata server paths with curl."""

    def test_metadata_paths_with_and_without_the_flavor_header(self):
        self.google_signed_in()
        base = "http://$GCE_METADATA_HOST/computeMetadata/v1/"
        get = 'curl -s -H "Metadata-Flavor: Google" "%s%%s"; echo' % base
        script = "\n".join([
            get % "instance/service-accounts/default/token?scopes=https://www.googleapis.com/auth/cloud-platform",
            get % "project/project-id",
            get % "instance/service-accounts/default/email",
            get % "instance/service-accounts/user1@example.test/?recursive=true",
            'curl -s -o /dev/null -w "%%{http_code}\\n" "%sproject/project-id"' % base,
            'curl -s -o /dev/null -w "%%{http_code}\\n" -H "Metadata-Flavor: Google" "%sinstance/zone"' % base,
            'curl -s -D - -o /dev/null -H "Metadata-Flavor: Google" "http://$GCE_METADATA_IP/" | tr -d "\\r" | grep -i flavor',
        ])
        r = self.sh(script, accounts=("g",), verbose=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        token = json.loads(lines[0])
        self.assertIsInstance(token["expires_in"], int)
        self.assertGreater(token["expires_in"], 300)
        info = self.emu.validate_access_token(token["access_token"])
        self.assertTrue(info and info["active"], info)
        self.assertEqual(lines[1:3], ["proj-exec-1", "user1@example.test"])
        self.assertEqual(json.loads(lines[3])["email"], "user1@example.test")
        self.assertEqual(lines[4:6], ["403", "404"])
        self.assertEqual(lines[6], "Metadata-Flavor: Google")
        self.assert_no_exec_leak(r)


if __name__ == "__main__":
    unittest.main()
