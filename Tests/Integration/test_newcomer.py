"""A newcomer's first hour: each natural first guess gets a line that says what to do.

- `tokenbroker get` typed at a terminal (a guess for "get a token") says at once what it waits
  for; it does not sit silently waiting for end of file.
- A misspelt config key or account name is named with the known name it stands for.
- `account add` without --provider lists every provider, oidc too; `--scopes a b` says to quote
  a list; `accounts` with no config says how to add one.
- The encrypted store's first run refuses a too-short passphrase, and a wrong passphrase says how
  to start over.
- `--help` names every provider and store; `get --help` recommends `setup-git`, not a global
  credential.helper; `help login` prints login's help."""
import json
import os
import pty
import select
import subprocess
import time
import unittest

from harness import TOKENBROKER, BrokerTestCase

GIT_HOST = "git.example.test"


class HelperActionOnTerminalTest(BrokerTestCase):
    emulator_options = {"device_code_interval": 1}

    def run_on_pty(self, typed):
        """Runs `tokenbroker get` with a terminal as stdin and stderr; types `typed` once the
        command has said what it reads. Returns (exit status, stdout, what the terminal showed)."""
        master, slave = pty.openpty()
        p = subprocess.Popen([TOKENBROKER, "get"], stdin=slave, stdout=subprocess.PIPE, stderr=slave,
                             env=self.env())
        os.close(slave)
        shown = ""
        deadline = time.time() + 20
        while "token get" not in shown and time.time() < deadline:
            if select.select([master], [], [], 0.2)[0]:
                shown += os.read(master, 65536).decode(errors="replace")
        os.write(master, typed.encode())
        try:
            out, _ = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
        try:
            while select.select([master], [], [], 0.2)[0]:
                shown += os.read(master, 65536).decode(errors="replace")
        except OSError:
            pass
        os.close(master)
        return p.returncode, out, shown

    def test_it_says_what_it_reads_and_names_token_get(self):
        rc, out, shown = self.run_on_pty("\n")
        self.assertIn("git's credential helper action", shown)
        self.assertIn("tokenbroker token get ACCOUNT", shown)
        # The empty line ended the request: a request with no protocol, refused at once.
        self.assertEqual(rc, 1, shown)
        self.assertIn("has no 'protocol'", shown)
        self.assertEqual(out, b"")

    def test_an_account_after_get_names_token_get_at_once(self):
        """`tokenbroker get work`, a natural guess for "a token of work", with stdin not a terminal
        (a script): git never passes an argument after its action, so this is a usage error
        naming `token get work`, without reading stdin or printing a credential."""
        for action in ("get", "store", "erase"):
            with self.subTest(action=action):
                r = self.run_broker(action, "work", input=f"protocol=https\nhost={GIT_HOST}\n\n".encode())
                self.assertEqual(r.returncode, 64, r.stderr)
                self.assertIn(b"run 'tokenbroker token get work'", r.stderr)
                self.assertEqual(r.stdout, b"")
        r = self.run_broker("get", input=f"protocol=https\nhost={GIT_HOST}\n\n".encode())
        self.assertNotEqual(r.returncode, 64, r.stderr)  # git's own call is unchanged

    def test_a_request_typed_by_hand_ends_at_its_empty_line(self):
        rc, _, err = self.login()
        self.assertEqual(rc, 0, err)
        rc, out, shown = self.run_on_pty(f"protocol=https\nhost={GIT_HOST}\n\n")
        self.assertEqual(rc, 0, shown)
        self.assertIn(b"password=", out)
        self.assertNotIn("password=", shown)


class MisspeltNamesTest(BrokerTestCase):
    """Each error or warning names the known name a misspelt one stands for."""

    def test_a_misspelt_required_key_is_named_in_the_error(self):
        self.write_config(self.default_config().replace("client-id =", "client_id ="))
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn("client-id: missing; the group has 'client_id': write it as 'client-id'", r.stderr.decode())

    def test_a_misspelt_broker_key_warns_with_the_key_it_looks_like(self):
        self.write_config(self.default_config(extra_broker="stroe = file"))
        r = self.run_broker("accounts")
        self.assertIn("[broker] stroe: unknown key, ignored (did you mean 'store'?)", r.stderr.decode())

    def test_a_misspelt_account_name_is_answered_with_the_one_it_looks_like(self):
        for args in (["token", "get", "wrok"], ["logout", "wrok"], ["login", "wrok"]):
            r = self.run_broker(*args)
            self.assertEqual(r.returncode, 64, (args, r.stderr))
            self.assertIn("no account 'wrok' in the config; did you mean 'work'?", r.stderr.decode(), args)


class FirstStepsTest(BrokerTestCase):

    def test_account_add_names_every_provider_and_the_quotes_a_list_needs(self):
        os.remove(self.config_path)
        r = self.run_broker("account", "add", "w", "--client-id", "c")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn("missing --provider (azure, google, sharepoint, oidc or github)", r.stderr.decode())
        # A key the provider needs is the command's fault, not the file's (the file is not there).
        r = self.run_broker("account", "add", "w", "--provider", "oidc", "--client-id", "c")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn("account add needs --issuer (", r.stderr.decode())
        self.assertIn("the config was not changed", r.stderr.decode())
        self.assertNotIn("fix the config file", r.stderr.decode())
        r = self.run_broker("account", "add", "w", "--provider", "azure", "--client-id", "c", "--scopes", "a", "b")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn("unexpected argument 'b'; to give several values, quote them: --scopes 'a b'", r.stderr.decode())
        self.assertFalse(os.path.exists(self.config_path))

    def test_accounts_without_a_config_says_how_to_add_one(self):
        os.remove(self.config_path)
        r = self.run_broker("accounts")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"")
        self.assertIn("no accounts in the config", r.stderr.decode())
        self.assertIn("tokenbroker account add NAME --provider P", r.stderr.decode())
        r = self.run_broker("accounts", "--names")  # for completion scripts: nothing at all
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))


class HelpTest(BrokerTestCase):

    def test_help_names_every_provider_and_client(self):
        r = self.run_broker("--help")
        text = r.stdout.decode()
        for word in ("Entra ID", "Google", "SharePoint", "OpenID Connect", "encrypted file", "docker", "kubectl", "exec",
                     "unlock [--passphrase-fd N] [--create]", "status [ACCOUNT | --url URL] [--json]"):
            self.assertIn(word, text)

    def test_help_command_is_that_commands_help_and_typos_are_named(self):
        r = self.run_broker("help", "login")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.decode().startswith("usage: tokenbroker login ACCOUNT"), r.stdout)
        for args in (["help", "lgoin"], ["lgoin", "work"]):
            r = self.run_broker(*args)
            self.assertEqual(r.returncode, 64, (args, r.stderr))
            self.assertIn("unknown command 'lgoin' (did you mean 'login'?)", r.stderr.decode())

    def test_get_help_recommends_setup_git_and_token_get(self):
        r = self.run_broker("get", "--help")
        text = r.stdout.decode()
        self.assertIn("tokenbroker setup-git", text)
        self.assertIn("tokenbroker token get ACCOUNT", text)
        self.assertNotIn("--global", text)


class EncryptedStoreFirstRunTest(BrokerTestCase):

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config(extra_broker="store = encrypted-file"))

    def tearDown(self):
        self.run_broker("agent", "stop")
        super().tearDown()

    def unlock(self, passphrase, *extra):
        return self.run_broker("unlock", "--passphrase-fd", "0", *extra, input=passphrase + b"\n")

    def test_a_short_new_passphrase_is_refused_and_nothing_is_created(self):
        r = self.unlock(b"abc", "--create")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn("needs at least 8 characters (this one has 3); nothing was created", r.stderr.decode())
        r = self.run_broker("token", "get", "work")
        self.assertIn("no encrypted token store", r.stderr.decode())

    def test_a_wrong_passphrase_says_how_to_start_over(self):
        self.assertEqual(self.unlock(b"the right passphrase", "--create").returncode, 0)
        r = self.run_broker("lock")  # says what it did, as unlock does
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("locked ", r.stderr.decode())
        self.assertIn("'tokenbroker unlock' to go on", r.stderr.decode())
        r = self.unlock(b"the wrong passphrase")
        self.assertEqual(r.returncode, 5, r.stderr)
        text = r.stderr.decode()
        self.assertIn("wrong passphrase or damaged file", text)
        self.assertIn("passphrase lost? move the file away", text)
        self.assertEqual(text.count("\n"), 1, text)


class StoreSwitchTest(BrokerTestCase):
    """A store switch (`store = encrypted-file` added to a config the agent has read) takes effect
    in the agent at once: it hands out no token cached from the keyring while `accounts` and
    `status` say the new store is missing or that nobody is signed in there."""
    emulator_options = {"device_code_interval": 1}

    def tearDown(self):
        self.run_broker("agent", "stop")
        super().tearDown()

    def test_the_agent_forgets_tokens_of_a_store_the_config_no_longer_names(self):
        rc, _, err = self.login()
        self.assertEqual(rc, 0, err)
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.run_broker("agent", "status").returncode, 0, "the agent holds the token")
        self.write_config(self.default_config(extra_broker="store = encrypted-file"))
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertEqual(r.stdout, b"")
        self.assertIn("no encrypted token store", r.stderr.decode())
        r = self.run_broker("unlock", "--passphrase-fd", "0", "--create", input=b"a new passphrase\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_broker("token", "get", "work")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("not signed in", r.stderr.decode())


class MoreFirstHourTest(BrokerTestCase):
    """More first guesses: `git-credential-tokenbroker --help` prints its help; `token get
    --min-valid` above the provider's lifetime and `--json` with another `--format` say what they
    cannot do; a misspelt `--scopes` gets a suggestion; `status` calls a store not made yet
    missing, not unreachable."""
    emulator_options = {"device_code_interval": 1}

    def tearDown(self):
        self.run_broker("agent", "stop")
        super().tearDown()

    def test_the_git_helper_name_prints_its_help(self):
        r = self.run_broker("--help", argv0="git-credential-tokenbroker")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("git credential helper", r.stdout.decode())

    def test_token_get_says_what_it_cannot_do(self):
        rc, _, err = self.login()
        self.assertEqual(rc, 0, err)
        r = self.run_broker("token", "get", "work", "--min-valid", "99999")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotEqual(r.stdout, b"")
        self.assertIn("less than --min-valid 99999", r.stderr.decode())
        r = self.run_broker("token", "get", "work", "--json", "--format", "header")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn("--json is --format json", r.stderr.decode())
        self.assertIn("--json ", self.run_broker("token", "get", "--help").stdout.decode())
        r = self.run_broker("token", "get", "work", "--scopes", "x")
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertIn("unknown option '--scopes' (did you mean '--scope'?)", r.stderr.decode())

    def test_status_calls_a_store_not_made_yet_missing(self):
        self.write_config(self.default_config(extra_broker="store = encrypted-file"))
        r = self.run_broker("status", "--json")
        self.assertEqual(json.loads(r.stdout)["store"]["state"], "missing", r.stderr)


if __name__ == "__main__":
    unittest.main()
