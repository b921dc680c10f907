"""The shell completions (completions/), each loaded in its real shell: bash (`complete -p`, then
the completion function called with COMP_WORDS/COMP_CWORD), zsh (an interactive zsh on a
pseudo-terminal driven by zsh/zpty, compinit, a TAB) and fish (`complete -C`). Each must offer
the commands, the options, the `--format` values and the account names of the config (from
`tokenbroker accounts --names`, honouring `--config`)."""
import os
import shutil
import subprocess
import unittest

from harness import BIN_DIR, ROOT, BrokerTestCase

COMPLETIONS = os.path.join(ROOT, "completions")
COMMANDS = {"login", "logout", "revoke", "token", "accounts", "status", "account", "setup-git", "get", "store",
            "erase", "capability", "agent", "version", "unlock", "lock", "forward", "exec"}
FORMATS = {"token", "header", "json", "env", "cookiejar", "exec-credential"}

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
    ("tokenbroker token get work --f", {"--force-refresh", "--format"}),
    ("tokenbroker --config {other} token get ", {"solo"}),
    ("tokenbroker account ", {"add", "remove"}),
    ("tokenbroker account remove ", {"work", "home-lab"}),
    ("tokenbroker account add new --prov", {"--provider"}),
    ("tokenbroker account add new --provider ", {"azure", "google", "sharepoint", "oidc"}),
    ("tokenbroker account add new --client-", {"--client-auth", "--client-id", "--client-secret"}),
    ("tokenbroker accounts --", {"--json", "--names", "--help"}),
    ("tokenbroker status ", {"work", "home-lab"}),
    ("tokenbroker status --", {"--url", "--json", "--help"}),
    ("tokenbroker agent ", {"run", "start", "stop", "status"}),
    ("tokenbroker exec ", {"work", "home-lab"}),
    ("tokenbroker exec work ", {"work", "home-lab", "--"}),  # issue 24: `--` comes next too
    ("tokenbroker exec work home-lab ", {"--"}),
    ("tokenbroker agent status --", {"--json", "--help"}),
    ("tokenbroker --", {"--config", "--verbose", "--help"}),
]
# Where an option is being completed, a shell may also offer the options every command takes.
GLOBAL_OPTIONS = {"--config", "--verbose", "--help"}

BASH_DRIVER = r"""
source "$1"
complete -p tokenbroker || exit 3
while IFS= read -r line; do
    read -ra COMP_WORDS <<< "$line"
    [[ $line == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMPREPLY=()
    _tokenbroker
    printf '%s\t%s\n' "$line" "${COMPREPLY[*]}"
done
"""

# An interactive zsh on a pty: compinit with completions/ first on $fpath, compadd wrapped so
# every match offered is also printed as HIT:<match>, a marker printed when completion ends.
# The markers are built at run time (${(U):-hit}) so the terminal's echo of these lines never
# matches them.
ZSH_DRIVER = r"""
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "fpath=($1 \$fpath); PS1=''; RPROMPT=''"
zpty -w z 'autoload -Uz compinit; compinit -u -D'
zpty -w z "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' insert-tab false"
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a __h; builtin compadd -O __h "$@"; local w; for w in $__h; do print -r -- "${(U):-hit}:$w"; done; builtin compadd "$@"; }'
zpty -w z '__tb_done() { print -r -- "${(U):-end}MARK" }; comppostfuncs=(__tb_done); bindkey "^I" complete-word'
zpty -w -n z "$2"$'\t'
local out
zpty -r -m z out '*ENDMARK*'
for l in ${(f)out}; do
  [[ $l == *HIT:* ]] && print -r -- "${${l##*HIT:}%%$'\r'*}"
done
zpty -d z
"""


class CompletionTest(BrokerTestCase):
    keyring = False

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config() + "\n[account home-lab]\nprovider = azure\nclient-id = c\n")
        self.other = os.path.join(self.tmp, "other.conf")
        with open(self.other, "w") as f:
            f.write("[account solo]\nprovider = azure\nclient-id = c\n")

    def shell_env(self):
        return self.env(PATH=BIN_DIR + os.pathsep + os.environ["PATH"], TERM="dumb")

    def cases(self):
        return [(line.format(other=self.other), want) for line, want in CASES]

    def assert_offer(self, line, offered, want):
        if line.split(" ")[-1].startswith("-"):
            self.assertEqual(offered - (GLOBAL_OPTIONS - want), want)
        else:
            self.assertEqual(offered, want)

    def test_bash(self):
        script = os.path.join(COMPLETIONS, "tokenbroker.bash")
        lines = "".join(line + "\n" for line, _ in self.cases())
        r = subprocess.run(["bash", "--norc", "--noprofile", "-c", BASH_DRIVER, "bash", script],
                           input=lines, capture_output=True, text=True, env=self.shell_env(), timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.splitlines()
        self.assertEqual(out[0], "complete -F _tokenbroker tokenbroker")
        got = dict(line.split("\t", 1) for line in out[1:])
        for line, want in self.cases():
            with self.subTest(line=line):
                self.assert_offer(line, set(got[line].split()), want)

    def test_zsh(self):
        if not shutil.which("zsh"):
            self.skipTest("zsh is not installed (make deps installs it)")
        driver = os.path.join(self.tmp, "driver.zsh")
        with open(driver, "w") as f:
            f.write(ZSH_DRIVER)
        for line, want in self.cases():
            with self.subTest(line=line):
                r = subprocess.run(["zsh", "-f", driver, COMPLETIONS, line], capture_output=True, text=True,
                                   env=dict(self.shell_env(), TERM="xterm"), timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assert_offer(line, set(r.stdout.split()), want)

    def test_fish(self):
        if not shutil.which("fish"):
            self.skipTest("fish is not installed (make deps installs it)")
        for line, want in self.cases():
            with self.subTest(line=line):
                script = ("set -g fish_complete_path %s $fish_complete_path; complete -C %s"
                          % (COMPLETIONS, _fish_quote(line)))
                r = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True,
                                   env=self.shell_env(), timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assert_offer(line, {row.split("\t")[0] for row in r.stdout.splitlines()}, want)


def _fish_quote(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


if __name__ == "__main__":
    unittest.main()
