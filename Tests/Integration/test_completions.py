"""The shell completions (completions/), each loaded in its real shell (shell_completion.py). Each
must offer the commands, the options, the `--format` values and the account names of the config
(from `tokenbroker accounts --names`, honouring `--config`)."""
import os
import unittest

from harness import BrokerTestCase
from shell_completion import ShellCompletionTests
COMMANDS = {"login", "logout", "revoke", "token", "accounts", "status", "account", "setup-git", "mail", "get", "store",
            "erase", "capability", "agent", "version", "unlock", "lock", "forward", "exec"}
FORMATS = {"token", "header", "json", "env", "cookiejar", "exec-credential", "xoauth2", "oauthbearer"}

# Each case: the command line typed (the last word is the one being completed) and what the
# offer must equal (a set) for every shell.
CASES = [
    ("tokenbroker ", COMMANDS),
    ("tokenbroker lo", {"login", "logout", "lock"}),
    ("tokenbroker unlock --", {"--passphrase-fd", "--create", "--help"}),
    ("tokenbroker login ", {"work", "home-lab"}),
    ("tokenbroker login h", {"home-lab"}),
    ("tokenbroker logout ", {"work", "home-lab"}),
    ("tokenbroker setup-git ", {"work", "home-lab"}),
    ("tokenbroker token ", {"get"}),
    ("tokenbroker token get ", {"work", "home-lab"}),
    ("tokenbroker token get work --format ", FORMATS),
    ("tokenbroker token get work --format e", {"env", "exec-credential"}),
    ("tokenbroker token get work --f", {"--force-refresh", "--format", "--for"}),
    ("tokenbroker token get work --for ", {"imap", "pop", "smtp"}),
    ("tokenbroker mail setup work ", {"msmtp", "mbsync", "neomutt", "curl"}),
    ("tokenbroker --config {other} token get ", {"solo"}),
    ("tokenbroker account ", {"add", "remove"}),
    ("tokenbroker account remove ", {"work", "home-lab"}),
    ("tokenbroker account add new --prov", {"--provider"}),
    ("tokenbroker account add new --provider ", {"azure", "google", "sharepoint", "oidc", "github"}),
    ("tokenbroker account add new --client-", {"--client-auth", "--client-id", "--client-secret"}),
    ("tokenbroker accounts --", {"--json", "--names", "--help"}),
    ("tokenbroker status ", {"work", "home-lab"}),
    ("tokenbroker status --", {"--url", "--json", "--help"}),
    ("tokenbroker agent ", {"run", "start", "stop", "status"}),
    ("tokenbroker exec ", {"work", "home-lab"}),
    ("tokenbroker exec work ", {"work", "home-lab", "--"}),  # `--` may come next too
    ("tokenbroker exec work home-lab ", {"--"}),
    ("tokenbroker agent status --", {"--json", "--help"}),
    ("tokenbroker --", {"--config", "--verbose", "--help"}),
]
# Where an option is being completed, a shell may also offer the options every command takes.
GLOBAL_OPTIONS = {"--config", "--verbose", "--help"}



class CompletionTest(ShellCompletionTests, BrokerTestCase):
    keyring = False

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config() + "\n[account home-lab]\nprovider = azure\nclient-id = c\n")
        self.other = os.path.join(self.tmp, "other.conf")
        with open(self.other, "w") as f:
            f.write("[account solo]\nprovider = azure\nclient-id = c\n")

    def cases(self):
        return [(line.format(other=self.other), want) for line, want in CASES]

    def assert_offer(self, line, offered, want):
        if line.split(" ")[-1].startswith("-"):
            self.assertEqual(offered - (GLOBAL_OPTIONS - want), want)
        else:
            self.assertEqual(offered, want)


if __name__ == "__main__":
    unittest.main()
