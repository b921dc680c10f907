"""The manual pages: clean under `mandoc -T lint` (exit 0, no output at all), rendered by man-db,
and complete: every command and option of `--help`, every `--format`, every exit status, and
every key that the config parser knows (Sources/BrokerCore/ConfigParser.swift)."""
import os
import re
import shutil
import subprocess
import unittest

from harness import ROOT, TOKENBROKER

MAN1 = os.path.join(ROOT, "man", "tokenbroker.1")
MAN5 = os.path.join(ROOT, "man", "tokenbroker-config.5")


def read(path):
    with open(path) as f:
        return f.read()


class ManPageTest(unittest.TestCase):

    def test_mandoc_lint_is_clean(self):
        self.assertTrue(shutil.which("mandoc"), "mandoc is not installed (make deps installs it)")
        for page in (MAN1, MAN5):
            with self.subTest(page=os.path.basename(page)):
                r = subprocess.run(["mandoc", "-T", "lint", page], capture_output=True, text=True)
                self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

    def test_man_renders_without_warnings(self):
        if not shutil.which("man"):
            self.skipTest("man-db is not installed")
        for page in (MAN1, MAN5):
            with self.subTest(page=os.path.basename(page)):
                r = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                                   env=dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="80"))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, "")
                self.assertIn("EXIT STATUS" if page == MAN1 else "HOST RESOLUTION", r.stdout)

    def test_every_config_key_is_described(self):
        source = read(os.path.join(ROOT, "Sources", "BrokerCore", "ConfigParser.swift"))
        page = read(MAN5)
        described = set(re.findall(r"Cm ([a-z-]+)", page))
        for name in ("brokerKeys", "accountKeys", "hostKeys"):
            body = re.search(name + r": Set<String> = \[(.*?)\]", source, re.S).group(1)
            keys = re.findall(r'"([a-z-]+)"', body)
            self.assertTrue(keys)
            for key in keys:
                with self.subTest(group=name, key=key):
                    self.assertIn(key, described)

    def test_every_command_option_format_and_status_is_described(self):
        page = read(MAN1)
        top = subprocess.run([TOKENBROKER, "--help"], capture_output=True, text=True).stdout
        commands = {line.split()[0] for line in top.split("commands:")[1].split("options:")[0].splitlines()
                    if line.strip()}
        self.assertIn("setup-git", commands)
        for command in commands | {"agent"}:
            with self.subTest(command=command):
                self.assertRegex(page, r"\.It Cm " + re.escape(command))
        for command in ("login", "logout", "token", "accounts", "account", "setup-git", "version", "agent"):
            help = subprocess.run([TOKENBROKER, command, "--help"], capture_output=True, text=True)
            if help.returncode != 0 and command == "agent":
                continue  # a build without the agent
            usage = help.stdout
            for option in set(re.findall(r"--([a-z-]+)", usage)):
                if option == "KEY":
                    continue
                with self.subTest(command=command, option=option):
                    self.assertRegex(page, r"Fl -" + re.escape(option) + r"\b")
        for fmt in ("token", "header", "json", "env", "cookiejar", "exec-credential"):
            with self.subTest(format=fmt):
                self.assertIn(".It Cm " + fmt + "\n", page)
        statuses = page.split(".Sh EXIT STATUS")[1].split(".Sh")[0]
        for code in (0, 1, 3, 4, 5, 6, 7, 64):
            with self.subTest(status=code):
                self.assertIn(".It %d\n" % code, statuses)
        for variable in ("TOKENBROKER_CONFIG", "TOKENBROKER_AGENT_SOCKET", "TOKENBROKER_BROWSER",
                         "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "GIT_CONFIG_GLOBAL"):
            with self.subTest(variable=variable):
                self.assertIn("Ev " + variable, page)


if __name__ == "__main__":
    unittest.main()
