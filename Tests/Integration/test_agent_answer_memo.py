"""The agent's answer memo (TokenCache.keep/answer): an answer given again to a byte-identical
request must be exactly what running the command afresh, with the agent's token cache, answers
at that moment (interface.md §8: every request with the config as it is now; login, logout,
revoke and git `erase` act at once, B20). Each request is asked twice first (the second answer is
the kept one), then one thing its answer depends on changes, and it is asked again.

Another D-Bus session: test_agent_session.py (the bus is checked before any kept answer)."""
import json
import os
import subprocess
import time
import unittest

from agent_flows import GIT_GET, AgentTestCase
from harness import TOKENBROKER

OTHER_GIT_GET = "protocol=https\nhost=other.example.test\n\n"
AUTHTYPE_GIT_GET = "capability[]=authtype\nwwwauth[]=Bearer\n" + GIT_GET
V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"


def fields(r):
    return dict(line.split("=", 1) for line in r.stdout.decode().splitlines() if "=" in line)


def exec_info(api_version):
    return json.dumps({"kind": "ExecCredential", "apiVersion": api_version, "spec": {"interactive": False}})


class AnswerMemoCase(AgentTestCase):

    def twice(self, *args, input=b"", env=None, argv0=None, code=0):
        """Asks the same request twice; the second answer (kept by the agent) must be the first,
        byte for byte, with the same status. Returns it."""
        first = self.run_broker(*args, input=input, env=env, argv0=argv0, timeout=30)
        self.assertEqual(first.returncode, code, first.stdout + first.stderr)
        again = self.run_broker(*args, input=input, env=env, argv0=argv0, timeout=30)
        self.assertEqual((again.returncode, again.stdout, again.stderr), (code, first.stdout, first.stderr))
        return again

    def edit_config(self, text):
        """Replaces the config file's bytes (the agent must see them on the next request)."""
        with open(self.config_path, "w") as f:
            f.write(text)


class ConfigEditTest(AnswerMemoCase):

    def test_every_edit_of_the_config_is_seen_by_the_next_identical_request(self):
        self.signed_in()
        token = self.git_password(self.twice("get", input=GIT_GET))
        base = self.default_config()
        # username, a comment only, a warning on stderr, hosts: each answered as the file says now.
        self.edit_config(self.default_config(extra_account="git-username = alice"))
        alice = self.twice("get", input=GIT_GET)
        self.assertEqual((fields(alice)["username"], fields(alice)["password"]), ("alice", token))
        self.edit_config(self.default_config(extra_account="git-username = alice\n# a comment only"))
        self.assertEqual(self.twice("get", input=GIT_GET).stdout, alice.stdout)
        self.edit_config(self.default_config(extra_broker="colour = blue"))
        warned = self.twice("get", input=GIT_GET)
        self.assertIn(b"warning:", warned.stderr)
        self.assertIn(b"colour", warned.stderr)
        self.edit_config(base)
        self.assertEqual(self.twice("get", input=GIT_GET).stderr, b"")
        self.edit_config(base.replace("hosts = git.example.test", "hosts = other.example.test"))
        self.assertEqual(self.twice("get", input=GIT_GET).stdout, b"")
        self.assertEqual(self.git_password(self.twice("get", input=OTHER_GIT_GET)), token)
        self.edit_config(base)
        self.assertEqual(self.twice("get", input=OTHER_GIT_GET).stdout, b"")
        # TOKENBROKER_CONFIG naming another file: that file's answer, not the agent's kept one.
        elsewhere = os.path.join(self.tmp, "elsewhere.conf")
        with open(elsewhere, "w") as f:
            f.write(self.default_config(extra_account="git-username = bob"))
        self.assertEqual(fields(self.twice("get", input=GIT_GET, env=self.env(TOKENBROKER_CONFIG=elsewhere)))
                         ["username"], "bob")
        self.assertNotIn(b"username=bob\n", self.twice("get", input=GIT_GET).stdout)

    def test_agent_off_is_honoured_before_any_kept_answer(self):
        """With `agent = off` the full program answers from the keyring: its cached access
        token is cleared behind the agent's back, so a kept answer would be the old token."""
        self.signed_in()
        token = self.git_password(self.twice("get", input=GIT_GET))
        self.twice("token", "get", "work")
        self.bus.secret_tool("clear", "application", "tokenbroker", "kind", "access-token")
        self.edit_config(self.default_config(extra_broker="agent = off"))
        fresh = self.run_broker("get", input=GIT_GET)
        self.assertEqual(fresh.returncode, 0, fresh.stderr)
        self.assertNotEqual(self.git_password(fresh), token)
        self.assertNotEqual(self.run_broker("token", "get", "work").stdout, (token + "\n").encode())

    def test_an_edit_past_the_first_mebibyte_of_a_large_config_is_seen(self):
        """The config files are compared whole: a config of more than 1 MiB (a long comment
        block, e.g. generated host lists) edited near its end is a new config."""
        self.signed_in()
        padding = ("# " + "x" * 76 + "\n") * (1 << 14)  # 1.25 MiB before the settings
        self.edit_config(padding + self.default_config(extra_account="git-username = carol"))
        self.assertEqual(fields(self.twice("get", input=GIT_GET))["username"], "carol")
        self.edit_config(padding + self.default_config(extra_account="git-username = dave"))
        self.assertEqual(fields(self.twice("get", input=GIT_GET))["username"], "dave")
        self.edit_config(padding + self.default_config(extra_broker="agent = off", extra_account="git-username = erin"))
        self.assertEqual(fields(self.twice("get", input=GIT_GET))["username"], "erin")


    def test_a_caller_whose_environment_names_other_files_is_answered_from_them(self):
        """The default config is `$XDG_CONFIG_HOME/tokenbroker/config` (else `$HOME/.config/...`)
        of the caller, as the full program reads it: a caller whose HOME or XDG_CONFIG_HOME names
        another file than the agent's was answered from the agent's file (even when the caller's
        own file said `agent = off`)."""
        self.signed_in()
        self.twice("get", input=GIT_GET)
        other_home = os.path.join(self.tmp, "other-home")
        other_config = os.path.join(other_home, ".config", "tokenbroker", "config")
        os.makedirs(os.path.dirname(other_config))
        for extra_broker, name in (("", "other-config"), ("agent = off", "other-off")):
            with open(other_config, "w") as f:
                f.write(self.default_config(extra_broker=extra_broker, extra_account="git-username = " + name))
            for env in (self.env(XDG_CONFIG_HOME=os.path.join(other_home, ".config")),
                        self.env(HOME=other_home, XDG_CONFIG_HOME=None)):
                self.assertEqual(fields(self.twice("get", input=GIT_GET, env=env))["username"], name)
        # The agent's own callers are still served from its memory, with its file's answer.
        self.assertEqual(fields(self.twice("get", input=GIT_GET))["username"], "user1@example.test")

    def test_a_config_that_is_not_a_regular_file_stalls_no_one(self):
        """GKeyFile refuses a config that is not a regular file ("Not a regular file"): the agent,
        which reads the config on its socket loop's thread for a kept answer, and the front, which
        reads `[broker] agent` before starting one, refuse it too and at once. A FIFO nobody
        writes once blocked the loop thread in open(): every client waited its 180 s bound."""
        self.signed_in()
        self.twice("get", input=GIT_GET)
        os.unlink(self.config_path)
        os.mkfifo(self.config_path)
        started = time.time()
        r = self.run_broker("get", input=GIT_GET, timeout=60)
        self.assertEqual((r.returncode, r.stdout), (64, b""), r.stderr)
        self.assertIn(b"Not a regular file", r.stderr)
        status = self.run_broker("agent", "status", timeout=60)
        self.assertEqual(status.returncode, 0, status.stdout + status.stderr)
        self.assertLess(time.time() - started, 30)
        # No agent: the front's own read of `[broker] agent` (a device read to its end never ends).
        self.kill_agent()
        os.unlink(self.config_path)
        os.symlink("/dev/zero", self.config_path)
        r = self.run_broker("token", "get", "work", timeout=60)
        self.assertEqual((r.returncode, r.stdout), (64, b""), r.stderr)
        self.assertIn(b"Not a regular file", r.stderr)


class SignInChangeTest(AnswerMemoCase):

    def setUp(self):
        super().setUp()
        base = self.default_config()
        other = base[base.index("[account work]"):].replace("[account work]", "[account other]")
        self.write_config(base + other.replace("hosts = git.example.test", "hosts = other.example.test"))

    def test_erase_logout_login_and_revoke_from_other_processes(self):
        self.signed_in()
        at1 = self.git_password(self.twice("get", input=GIT_GET))
        self.twice("token", "get", "work")
        # Another account's logout changes nothing of this one's answer.
        self.assertEqual(self.run_broker("logout", "other").returncode, 0)
        self.assertEqual(self.git_password(self.twice("get", input=GIT_GET)), at1)
        # git `erase` of the token handed out: the next get is another token.
        erase = self.run_broker("erase", argv0="git-credential-tokenbroker",
                                input=GIT_GET.rstrip("\n") + "\nusername=x\npassword=%s\n\n" % at1)
        self.assertEqual(erase.returncode, 0, erase.stderr)
        at2 = self.git_password(self.twice("get", input=GIT_GET, argv0="git-credential-tokenbroker"))
        self.assertNotEqual(at2, at1)
        self.assertEqual(self.git_password(self.twice("get", input=GIT_GET)), at2)
        self.assertEqual(self.twice("token", "get", "work").stdout, (at2 + "\n").encode())
        # logout while identical requests run: none of their answers is kept past it, and
        # nothing of the old sign-in is handed out after; a new login: only its tokens.
        logout = subprocess.Popen([TOKENBROKER, "logout", "work"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=self.env())
        racing = self.run_many([("get",)] * 12, inputs=[GIT_GET] * 12)
        self.assertEqual(logout.wait(60), 0)
        for r in racing:
            self.assertIn(r.returncode, (0, 3), r.stderr)
        # git's helper answers only quit=1 (interface.md §4), token get nothing.
        self.assertEqual(self.twice("get", input=GIT_GET, code=3).stdout, b"quit=1\n")
        self.assertEqual(self.twice("token", "get", "work", code=3).stdout, b"")
        self.assertEqual(self.login_and_approve().returncode, 0)
        at3 = self.git_password(self.twice("get", input=GIT_GET))
        self.assertNotIn(at3, (at1, at2))
        self.assertEqual(self.twice("token", "get", "work").stdout, (at3 + "\n").encode())
        # A login of another account is a change of the cache too: answers stay right.
        self.assertEqual(self.login_and_approve("other").returncode, 0)
        self.assertEqual(self.git_password(self.twice("get", input=GIT_GET)), at3)
        other = self.git_password(self.twice("get", input=OTHER_GIT_GET))
        self.assertNotEqual(other, at3)
        self.assertEqual(self.run_broker("revoke", "work").returncode, 0)
        self.twice("get", input=GIT_GET, code=3)
        self.twice("token", "get", "work", code=3)
        self.assertEqual(self.git_password(self.twice("get", input=OTHER_GIT_GET)), other)


class ExpiryTest(AnswerMemoCase):
    # 6 s tokens: refresh-margin 300 is capped at 3 s (ExpiryPolicy), --min-valid 5 needs 5 s.
    emulator_options = {"device_code_interval": 1, "access_token_lifetime": 6}

    def token_json(self, *extra):
        """`token get --format json` asked twice; checks the token has what the request needs
        left at the time it was asked. Returns (access token, expires_on)."""
        needed = int(extra[-1]) if extra else 3
        asked = int(time.time())
        doc = json.loads(self.twice("token", "get", "work", "--format", "json", *extra).stdout)
        self.assertGreaterEqual(doc["expires_on"] - asked, needed, doc)
        return doc["access_token"], doc["expires_on"]

    def sleep_until(self, t):
        time.sleep(max(0, t - time.time()))

    def test_a_kept_answer_ends_where_memory_would_refresh(self):
        self.signed_in()
        token, expires = self.token_json()
        self.sleep_until(expires - 3 + 1.1)  # past the margin: due for refresh
        refreshes = len(self.refresh_requests())
        again, expires = self.token_json()
        self.assertNotEqual(again, token)
        self.assertGreater(len(self.refresh_requests()), refreshes)
        held, held_expires = self.token_json("--min-valid", "5")  # may be a new token on a slow machine
        self.sleep_until(held_expires - 5 + 1.1)
        self.assertNotEqual(self.token_json("--min-valid", "5")[0], held)
        git = self.git_password(self.run_broker("get", input=GIT_GET))
        self.assertTrue(self.emu.validate_access_token(git))
        # --force-refresh is never answered again: two calls, two refreshes, two tokens.
        refreshes = len(self.refresh_requests())
        forced = [self.run_broker("token", "get", "work", "--force-refresh").stdout for _ in range(2)]
        self.assertNotEqual(forced[0], forced[1])
        self.assertEqual(len(self.refresh_requests()), refreshes + 2)


class RequestShapeTest(AnswerMemoCase):

    def test_each_format_environment_and_helper_gets_its_own_answer(self):
        self.signed_in()
        token = self.twice("token", "get", "work").stdout.decode().strip()
        self.assertEqual(self.twice("token", "get", "work", "--format", "header").stdout,
                         ("Authorization: Bearer %s\n" % token).encode())
        self.assertIn(("TOKENBROKER_ACCESS_TOKEN=%s\n" % token).encode(),
                      self.twice("token", "get", "work", "--format", "env").stdout)
        self.assertEqual(json.loads(self.twice("token", "get", "work", "--json").stdout)["access_token"], token)
        for version in (V1, V1BETA1, V1):
            r = self.twice("token", "get", "work", "--format", "exec-credential",
                           env=self.env(KUBERNETES_EXEC_INFO=exec_info(version)))
            doc = json.loads(r.stdout)
            self.assertEqual((doc["apiVersion"], doc["status"]["token"]), (version, token))
        # git with and without `capability[]=authtype`, in turn.
        for _ in range(2):
            self.assertEqual(fields(self.twice("get", input=AUTHTYPE_GIT_GET))["credential"], token)
            plain = fields(self.twice("get", input=GIT_GET))
            self.assertEqual(plain["password"], token)
            self.assertNotIn("credential", plain)
        # docker: the ServerURL as this request sent it.
        for url in ("https://git.example.test", "git.example.test", "https://git.example.test"):
            doc = json.loads(self.twice("get", input=url, argv0="docker-credential-tokenbroker").stdout)
            self.assertEqual((doc["ServerURL"], doc["Secret"]), (url, token))
        # TOKENBROKER_VERBOSE=1 answers say how long is left now: never given again.
        verbose = self.env(TOKENBROKER_VERBOSE="1")
        first = self.run_broker("get", input=GIT_GET, env=verbose)
        time.sleep(1.1)
        second = self.run_broker("get", input=GIT_GET, env=verbose)
        self.assertEqual((first.returncode, second.returncode), (0, 0), second.stderr)
        self.assertIn(b"the agent's memory had the token", second.stderr)
        self.assertNotEqual(first.stderr, second.stderr)
        self.assertEqual(self.git_password(second), token)


class SharePointViaTest(AnswerMemoCase):

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config() + f"""
[account intranet]
provider = sharepoint
site = {self.emu.base_url}
via = work
mode = bearer
hosts = sp.example.test
""")

    def test_logout_of_the_via_account_ends_the_sites_kept_answers(self):
        self.signed_in()
        site_get = "protocol=https\nhost=sp.example.test\n\n"
        token = self.twice("token", "get", "intranet").stdout.decode().strip()
        self.assertEqual(self.emu.validate_access_token(token)["aud"], self.emu.base_url)
        self.assertEqual(self.git_password(self.twice("get", input=site_get)), token)
        self.assertEqual(self.run_broker("logout", "work").returncode, 0)
        for r, stdout in ((self.twice("token", "get", "intranet", code=3), b""),
                          (self.twice("get", input=site_get, code=3), b"quit=1\n")):  # interface.md §4
            self.assertEqual(r.stdout, stdout)
            self.assertIn(b"tokenbroker login work", r.stderr)
        self.assertEqual(self.login_and_approve().returncode, 0)
        again = self.twice("token", "get", "intranet").stdout.decode().strip()
        self.assertNotEqual(again, token)
        self.assertEqual(self.git_password(self.twice("get", input=site_get)), again)


class EncryptedStoreLockTest(AnswerMemoCase):
    keyring = False
    passphrase = b"memo passphrase 5e21\n"

    def test_lock_ends_every_kept_answer_and_unlock_serves_again(self):
        self.write_config(self.default_config(extra_broker="store = encrypted-file"))
        unlock = ("unlock", "--passphrase-fd", "0")
        self.assertEqual(self.run_broker(*unlock, "--create", input=self.passphrase).returncode, 0)
        rc, _, err = self.login()
        self.assertEqual(rc, 0, err)
        token = self.twice("token", "get", "work").stdout
        self.assertEqual((self.git_password(self.twice("get", input=GIT_GET)) + "\n").encode(), token)
        self.assertEqual(self.run_broker("lock").returncode, 0)
        for r in (self.twice("token", "get", "work", code=5), self.twice("get", input=GIT_GET, code=5)):
            self.assertEqual(r.stdout, b"")
            self.assertIn(b"tokenbroker unlock", r.stderr)
        self.assertEqual(self.run_broker(*unlock, input=self.passphrase).returncode, 0)
        self.assertEqual(self.twice("token", "get", "work").stdout, token)  # from the store again


if __name__ == "__main__":
    unittest.main()
