"""Drives the shell completions (completions/) in their real shells, for the tests that hold
them to something (test_completions.py: commands, options, formats and account names;
test_declarations.py: every declared form): bash (`complete -p`, then the completion function
called with COMP_WORDS/COMP_CWORD), zsh (an interactive zsh on a pseudo-terminal driven by
zsh/zpty, compinit, a TAB) and fish (`complete -C`).

A test case class mixes in `ShellCompletionTests` and gives `cases()` (tuples whose first item is
the command line typed, the last word being completed) and `assert_offer(line, offered, *rest)`
(`rest`: the case's other items); it gets test_bash, test_zsh and test_fish."""
import os
import shutil
import subprocess

from harness import BIN_DIR, ROOT

COMPLETIONS = os.path.join(ROOT, "completions")

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


def fish_quote(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


class ShellCompletionTests:
    """test_bash, test_zsh and test_fish over `self.cases()`, each offer checked by `self.assert_offer`."""

    def shell_env(self, **extra):
        return self.env(**dict({"PATH": BIN_DIR + os.pathsep + os.environ["PATH"], "TERM": "dumb"}, **extra))

    def test_bash(self):
        script = os.path.join(COMPLETIONS, "tokenbroker.bash")
        lines = "".join(case[0] + "\n" for case in self.cases())
        r = subprocess.run(["bash", "--norc", "--noprofile", "-c", BASH_DRIVER, "bash", script],
                           input=lines, capture_output=True, text=True, env=self.shell_env(), timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.splitlines()
        self.assertEqual(out[0], "complete -F _tokenbroker tokenbroker")
        got = dict(line.split("\t", 1) for line in out[1:])
        for case in self.cases():
            with self.subTest(line=case[0]):
                self.assert_offer(case[0], set(got[case[0]].split()), *case[1:])

    def test_zsh(self):
        if not shutil.which("zsh"):
            self.skipTest("zsh is not installed (make deps installs it)")
        driver = os.path.join(self.tmp, "driver.zsh")
        with open(driver, "w") as f:
            f.write(ZSH_DRIVER)
        for case in self.cases():
            with self.subTest(line=case[0]):
                r = subprocess.run(["zsh", "-f", driver, COMPLETIONS, case[0]], capture_output=True, text=True,
                                   env=self.shell_env(TERM="xterm"), timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assert_offer(case[0], set(r.stdout.split()), *case[1:])

    def test_fish(self):
        if not shutil.which("fish"):
            self.skipTest("fish is not installed (make deps installs it)")
        for case in self.cases():
            with self.subTest(line=case[0]):
                script = ("set -g fish_complete_path %s $fish_complete_path; complete -C %s"
                          % (COMPLETIONS, fish_quote(case[0])))
                r = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True,
                                   env=self.shell_env(), timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assert_offer(case[0], {row.split("\t")[0] for row in r.stdout.splitlines()}, *case[1:])
