"""Keyring items over their life: concurrent writers, duplicates, sign-out, and secrets that must
never leave the keyring (interface.md §3, §7; bug-cases.md B06, B21, B29).
"""
import json
import os
import subprocess
import time
import unittest

import session_key_shim
from harness import CLIENT_ID, TOKENBROKER
from keyring_providers import each_provider
from test_keyring import GIT_GET, KeyringTestCase, needs_fake


@each_provider
class ConcurrentWritersTest(KeyringTestCase):
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "accept"}

    def test_second_concurrent_login_exits_7(self):
        """B06/B07: while one `login` of an account waits for approval a second exits 7 at once
        (the login lock) and starts no second device flow; the first then completes."""
        first = subprocess.Popen([TOKENBROKER, "login", "work", "--device-code"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=self.env())
        try:
            deadline = time.time() + 30
            while not self.emu.requests(endpoint="devicecode") and time.time() < deadline:
                time.sleep(0.05)
            second = self.run_broker("login", "work", "--device-code")
            self.assertEqual(second.returncode, 7, second.stderr)
            self.assertIn(b"in progress", second.stderr)
            self.assertEqual(len(self.emu.requests(endpoint="devicecode")), 1)
            self.emu.approve()
            out, err = first.communicate(timeout=60)
        finally:
            if first.poll() is None:
                first.kill()
                first.communicate()
        self.assertEqual(first.returncode, 0, err)
        self.assertEqual(len(self.refresh_token_items()), 1)

    def refresh_token_items(self):
        return [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"]

    def test_concurrent_force_refresh_leaves_one_refresh_token_item(self):
        """B06: concurrent `token get --force-refresh` processes each store a rotated refresh
        token; all succeed and the keyring holds exactly one refresh-token item (and one
        access-token item) afterwards, with a token the provider accepts."""
        self.signed_in()
        for round in range(3):
            procs = [subprocess.Popen([TOKENBROKER, "token", "get", "work", "--force-refresh"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env())
                     for _ in range(3)]
            results = [(p.communicate(timeout=60), p.returncode) for p in procs]
            for (out, err), rc in results:
                self.assertEqual(rc, 0, err)
                self.assertTrue(self.emu.validate_access_token(out.decode().strip()))
            items = self.refresh_token_items()
            self.assertEqual(len(items), 1, items)
            access = [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "access-token"]
            self.assertEqual(len(access), 1, access)
        stored = json.loads(items[0]["secret"])["refresh_token"]
        self.assertIn(stored, [t["token"] for t in self.emu.state()["refresh_tokens"]])
        r = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.emu.requests(grant_type="refresh_token")[-1]["form"]["refresh_token"], stored)


@each_provider
class SessionKeyMismatchTest(KeyringTestCase):
    """A session whose key the service derived otherwise than libsecret (kwalletd 5: about one
    session in 170, README "Keyrings"), made so by `session_key_shim` for a process's first
    secrets: neither what it reads nor what it writes can be decrypted on that session."""
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "reject"}

    def setUp(self):
        super().setUp()
        # The shim is loaded into the tokenbroker-core process that serves the call: no agent.
        self.write_config(self.default_config(extra_broker="agent = off"))

    def refresh_token_items(self):
        return [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"]

    def test_a_secret_that_cannot_be_decrypted_is_read_on_a_new_session(self):
        """The first two reads fail to decrypt (load's GetSecrets, then its item's GetSecret,
        which libsecret answers "Received invalid secret"): `token get` reads again on a new
        session and succeeds; it exited 5 "the Secret Service failed"."""
        self.signed_in()
        r = self.run_broker("token", "get", "work", env=self.env(**session_key_shim.env(self.tmp, reads=2)))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))

    def test_a_rotated_refresh_token_the_service_could_not_decrypt_is_written_again_and_kept(self):
        """The rotated refresh token's first write cannot be decrypted by the service. kwalletd
        answers "Can't find session" after it has made the item (its attributes, no wallet
        entry) and gave the next item of the same label that same entry: deleting the item left
        behind deleted the rotated token written on the new session, and the account was signed
        out (the old token already redeemed). Now exactly one item holds the rotated token."""
        self.signed_in()
        r = self.run_broker("token", "get", "work", "--force-refresh",
                            env=self.env(**session_key_shim.env(self.tmp, sends=1)))
        self.assertEqual(r.returncode, 0, r.stderr)
        items = self.refresh_token_items()
        self.assertEqual(len(items), 1, items)
        stored = json.loads(items[0]["secret"])["refresh_token"]
        self.assertEqual(stored, self.emu.state()["refresh_tokens"][-1]["token"])
        again = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(self.emu.requests(grant_type="refresh_token")[-1]["form"]["refresh_token"], stored)


class DuplicateItemsTest(KeyringTestCase):
    keyring = False

    @needs_fake
    def test_duplicate_items_newest_wins_and_one_remains(self):
        """B06: two items with the same attributes (a crash or another writer's leftover):
        `token get` uses the newest (LibsecretStore documents: newest `Modified` wins, the other
        unlocked duplicates are deleted) and afterwards one item remains; no login starts."""
        seed = self.seed_refresh_tokens("RT-DUP-OLD-SENTINEL", "RT-DUP-NEW-SENTINEL")
        self.bus.start_fake_secret_service("duplicates", seed=seed)
        self.assertEqual(len(self.keyring_items("work")), 2)
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
        refreshes = self.emu.requests(grant_type="refresh_token")
        self.assertEqual([q["form"]["refresh_token"] for q in refreshes], ["RT-DUP-NEW-SENTINEL"])
        items = [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"]
        self.assertEqual(len(items), 1, items)
        self.assertNotIn("RT-DUP-OLD-SENTINEL", items[0]["secret"])
        self.assertEqual(self.emu.requests(endpoint="devicecode"), [])
        again = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(again.returncode, 0, again.stderr)


class KeePassXCWriteTest(KeyringTestCase):
    """The fake Secret Service as KeePassXC 2.7.4 (Debian 12) behaves: UUID item paths, and a
    CreateItem with `replace` answered by an access dialog that nobody answers."""
    keyring = False

    def refresh_token_items(self):
        return [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"]

    @needs_fake
    def test_a_rotated_refresh_token_is_written_without_a_replace(self):
        """`token get` stores the rotated refresh token by creating a new item and deleting the
        old one: a replace waited 10 s for the dialog, exited 5 and left the keyring with the
        token the provider had just redeemed. Afterwards one item holds the rotated token, and it
        refreshes again."""
        self.bus.start_fake_secret_service("normal", seed=self.seed_refresh_tokens("RT-KPXC-1"), keepassxc=True)
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        items = self.refresh_token_items()
        self.assertEqual(len(items), 1, items)
        stored = json.loads(items[0]["secret"])["refresh_token"]
        self.assertNotEqual(stored, "RT-KPXC-1")
        again = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(self.emu.requests(grant_type="refresh_token")[-1]["form"]["refresh_token"], stored)
        self.assertEqual(len(self.refresh_token_items()), 1)


class RotatedTokenNotStoredTest(KeyringTestCase):
    """A keyring that reads but will not write, under strict rotation: the redeemed refresh token
    is dead the moment the provider answers."""
    keyring = False
    emulator_options = {"device_code_interval": 1, "refresh_token_reuse": "reject"}

    def refresh_tokens_sent(self):
        return [q["form"]["refresh_token"] for q in self.emu.requests(grant_type="refresh_token")]

    @needs_fake
    def test_the_agent_keeps_a_rotated_token_it_could_not_write(self):
        """The first `token get` exits 5 saying the account will need `tokenbroker login` if the
        new token cannot be written; the agent keeps the new token, so the next one refreshes
        with it, not with the dead stored one (which was rejected and deleted: signed out); once
        the keyring writes again, the kept token is stored and the account works."""
        refuse = os.path.join(self.tmp, "refuse-writes")
        open(refuse, "w").close()
        self.bus.start_fake_secret_service("normal", seed=self.seed_refresh_tokens("RT-UNWRITTEN-1"),
                                           refuse_writes=refuse)
        first = self.run_broker("token", "get", "work")
        self.assert_store_failure(first, "tokenbroker login work")
        second = self.run_broker("token", "get", "work")
        self.assert_store_failure(second, "tokenbroker login work")
        sent = self.refresh_tokens_sent()
        self.assertEqual(len(sent), 2, sent)
        self.assertEqual(sent[0], "RT-UNWRITTEN-1")
        self.assertNotEqual(sent[1], "RT-UNWRITTEN-1")
        os.remove(refuse)
        third = self.run_broker("token", "get", "work")
        self.assertEqual(third.returncode, 0, third.stderr)
        items = [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"]
        self.assertEqual(len(items), 1, items)
        stored = json.loads(items[0]["secret"])["refresh_token"]
        self.assertIn(stored, self.issued_refresh_tokens())
        again = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(self.refresh_tokens_sent()[-1], stored)

    @needs_fake
    def test_without_the_agent_the_write_is_tried_again_and_the_message_names_login(self):
        """`agent = off`: the write is made 3 times, then exit 5 naming `tokenbroker login work`."""
        self.write_config(self.default_config(extra_broker="agent = off"))
        refuse = os.path.join(self.tmp, "refuse-writes")
        open(refuse, "w").close()
        log = self.fake_log()
        self.bus.start_fake_secret_service("normal", seed=self.seed_refresh_tokens("RT-UNWRITTEN-2"),
                                           refuse_writes=refuse, log=log)
        r = self.run_broker("token", "get", "work")
        self.assert_store_failure(r, "tokenbroker login work")
        with open(log) as f:
            self.assertEqual(sum(1 for line in f if line.startswith("Collection.CreateItem")), 3)


@each_provider
class SignOutTest(KeyringTestCase):

    def two_accounts(self):
        self.write_config(self.default_config() + f"""
[account home]
provider = azure
tenant = contoso.example
client-id = {CLIENT_ID}
authority = {self.emu.base_url}
scopes = https://graph.microsoft.com/Mail.Read
""")
        for account in ("work", "home"):
            rc, out, err = self.login(account)
            self.assertEqual(rc, 0, err)
            r = self.run_broker("token", "get", account)
            self.assertEqual(r.returncode, 0, r.stderr)

    def search(self, *attrs):
        r = self.bus.secret_tool("search", "--all", "application", "tokenbroker", *attrs)
        return r.stdout + r.stderr

    def test_logout_removes_every_item_of_the_account_only(self):
        """B21: after `logout work`, `secret-tool search application tokenbroker account work`
        finds nothing, git `get` prints no password (exit 3), and the other account stays."""
        self.two_accounts()
        r = self.run_broker("logout", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"signed out of 'work'", r.stderr)
        self.assertEqual(self.search("account", "work"), "")
        self.assertIn("account = home", self.search("account", "home"))
        g = self.run_broker("get", input=GIT_GET)
        self.assertEqual((g.returncode, g.stdout), (3, b"quit=1\n"))
        self.assertIn(b"tokenbroker login work", g.stderr)
        t = self.run_broker("token", "get", "work")
        self.assertEqual((t.returncode, t.stdout), (3, b""))

    def test_logout_all_removes_every_item(self):
        """B21: `logout --all` removes every tokenbroker item of every account."""
        self.two_accounts()
        r = self.run_broker("logout", "--all")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.search(), "")
        self.assertEqual(self.keyring_items(), [])

    def test_revoke_azure_signs_out_locally(self):
        """B21: Azure has no revocation endpoint: `revoke work` says so, exit 0, and the items
        are gone; the emulator received no revocation request."""
        self.signed_in()
        before = len(self.emu.requests())
        r = self.run_broker("revoke", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"azure has no revocation endpoint; signed out locally", r.stderr)
        self.assertEqual(self.search("account", "work"), "")
        self.assertEqual(len(self.emu.requests()), before)


@each_provider
class NoLeakTest(KeyringTestCase):

    def known_secrets(self):
        state = self.emu.state()
        found = [t["token"] for t in state["refresh_tokens"]]
        found += [t["token"] for t in state["access_tokens"]]
        found += [d["device_code"] for d in state["device_codes"]]
        return found

    def test_no_secret_in_stderr_attributes_or_labels(self):
        """B29: across login, token get (every format), git get/store/erase, malformed requests,
        --verbose, a refresh error that echoes the token and a locked keyring, no access token,
        refresh token or device code appears on stderr, in an attribute or in a label."""
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)
        errs = [err]
        runs = [("token", "get", "work", "--verbose"), ("token", "get", "work", "--format", "json"),
                ("token", "get", "work", "--format", "env"), ("token", "get", "work", "--force-refresh", "--verbose"),
                ("accounts", "--verbose"), ("accounts", "--json")]
        for args in runs:
            r = self.run_broker(*args)
            self.assertEqual(r.returncode, 0, r.stderr)
            errs.append(r.stderr)
        g = self.run_broker("--verbose", "get", input=GIT_GET)
        token = dict(line.split("=", 1) for line in g.stdout.decode().splitlines())["password"]
        errs.append(g.stderr)
        for action, body in (("store", f"username=u\npassword={token}\n"), ("erase", f"password={token}\n"),
                             ("get", f"password={token}\npassword={token}\n"), ("get", f"password={token}\rx\n"),
                             ("get", f"password={token}")):
            r = self.run_broker("--verbose", action, input="protocol=https\nhost=git.example.test\n" + body + "\n")
            errs.append(r.stderr)
        # A provider error that echoes the refresh token sent (oidc-agent#641) and a long
        # token-shaped value the process never saw (real tokens are long; the emulator's are short).
        stored_rt = json.loads(self.refresh_token_secret())["refresh_token"]
        long_token = "eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0" + "x" * 40
        self.emu.add_fault("json", "token", status=400, grant_type="refresh_token", body={
            "error": "invalid_request",
            "error_description": f"AADSTS9002313: Invalid request. refresh_token={stored_rt} ctx={long_token}"})
        r = self.run_broker("token", "get", "work", "--force-refresh", "--verbose")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"AADSTS9002313", r.stderr)
        self.assertNotIn(long_token.encode(), r.stderr)
        errs.append(r.stderr)
        self.keyring_service.lock()
        for args in (("token", "get", "work", "--verbose"), ("--verbose", "get")):
            errs.append(self.run_broker(*args, input=GIT_GET).stderr)
        self.keyring_service.unlock()
        secrets = self.known_secrets()
        self.assertGreater(len(secrets), 3)
        self.assert_no_leak(*secrets, outputs=errs)

    def test_token_get_runs_with_argv_only_and_starts_no_child(self):
        """B29: while `token get` waits on the provider, its /proc cmdline holds only its argv
        (no secret) and it has started no child process that could see one."""
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)
        self.emu.add_fault("delay", "token", seconds=2, grant_type="refresh_token")
        argv = [TOKENBROKER, "token", "get", "work", "--force-refresh"]
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env())
        samples, children = [], set()
        try:
            deadline = time.time() + 30
            while p.poll() is None and time.time() < deadline:
                try:
                    with open(f"/proc/{p.pid}/cmdline", "rb") as f:
                        cmdline = f.read()
                    if cmdline:  # empty once the process has exited (a zombie)
                        samples.append(cmdline)
                    for task in os.listdir(f"/proc/{p.pid}/task"):
                        with open(f"/proc/{p.pid}/task/{task}/children") as f:
                            children.update(f.read().split())
                except OSError:
                    break
                time.sleep(0.02)
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 0, err)
        self.assertTrue(samples)
        # The front keeps its argv (it hands the call to the agent, or execs tokenbroker-core in
        # place: same pid, same argv).
        self.assertEqual(set(samples), {b"\0".join(a.encode() for a in argv) + b"\0"})
        # The one child allowed is the agent it started on first use: `tokenbroker-core agent
        # run`, whose argv and environment hold no secret either.
        agent = self.agent_pid()
        self.assertEqual(children - {str(agent)}, set())
        if agent is not None:
            for name in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{agent}/{name}", "rb") as f:
                        samples.append(f.read())
                except PermissionError:  # environ of a non-dumpable process: root only
                    pass
        self.assert_no_leak(*self.known_secrets(), outputs=[err] + samples)


if __name__ == "__main__":
    unittest.main()
