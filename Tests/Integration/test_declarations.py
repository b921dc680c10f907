"""Each command is declared once (Sources/BrokerWire/CommandTable.swift); this holds everything
else to that declaration, read from `tokenbroker help --declarations`: `--help` of every command,
the agent's routing, the man page, README and the three completions name every command, subcommand
and option it declares, and no other."""
import json
import os
import re
import subprocess
import unittest

from harness import ROOT, TOKENBROKER, BrokerTestCase
from shell_completion import ShellCompletionTests

MAN1 = os.path.join(ROOT, "man", "tokenbroker.1")
README = os.path.join(ROOT, "README.md")
# What a shell may offer besides the options asked for, where an option is being completed.
GLOBAL_OFFER = {"--config", "--verbose", "--help"}


def read(path):
    with open(path) as f:
        return f.read()


def declarations():
    r = subprocess.run([TOKENBROKER, "help", "--declarations"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


DECL = declarations()
COMMANDS = {c["name"]: c for c in DECL["commands"]}
GLOBALS = {o["name"] for o in DECL["global"]}
ACCOUNT_KEYS = set(DECL["accountKeys"])


def form_words(command, form):
    return [command["name"]] + ([form["subcommand"]] if form.get("subcommand") else [])


def own_options(form):
    """The option names a form declares."""
    return {o["name"] for o in form["options"]}


def form_options(form):
    """The option names a form takes: its own, and every account key for `account add`."""
    return own_options(form) | (ACCOUNT_KEYS if form["takesAccountKeys"] else set())


def every_option():
    return GLOBALS | {"help"} | ACCOUNT_KEYS | {o["name"] for c in DECL["commands"] for f in c["forms"]
                                                 for o in f["options"]}


class HelpAndParsingTest(BrokerTestCase):
    keyring = False

    def broker(self, *args):
        r = self.run_broker(*args)
        return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(), r.stderr.decode())

    def test_help_of_every_command_names_its_options(self):
        top = self.broker("--help").stdout
        listed = top.split("commands:\n")[1].split("\noptions:")[0]
        for command in DECL["commands"]:
            with self.subTest(command=command["name"]):
                self.assertIn(command["name"], listed)
                r = self.broker(command["name"], "--help")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout.splitlines()[0], command["usage"])
                usage_options = set(re.findall(r"--([a-z][a-z-]*)", command["usage"]))
                declared = set().union(*(own_options(f) for f in command["forms"]))
                self.assertEqual(usage_options, declared)
                # The description may name other commands' options, never an undeclared one.
                self.assertLessEqual(set(re.findall(r"--([a-z][a-z-]*)", r.stdout)), every_option())
        self.assertEqual(set(re.findall(r"^  --([a-z-]+)", top, re.M)), GLOBALS)

    def test_an_undeclared_option_is_refused_with_the_usage(self):
        for command in DECL["commands"]:
            for form in command["forms"]:
                if form["takesAccountKeys"]:
                    continue
                with self.subTest(form=form_words(command, form)):
                    tail = ["--", "true"] if "--" in form["arguments"] else []
                    r = self.broker(*form_words(command, form), "--no-such-option", *tail)
                    self.assertEqual(r.returncode, 64, r.stderr)
                    self.assertIn("'--no-such-option'", r.stderr)
                    self.assertIn(command["usage"], r.stderr)


class ManPageTest(unittest.TestCase):

    def setUp(self):
        self.page = read(MAN1)
        self.synopsis = self.page.split(".Sh SYNOPSIS\n")[1].split(".Sh ")[0]
        self.commands = self.page.split(".Sh COMMANDS\n")[1].split(".Ss Formats")[0]

    @staticmethod
    def flags(text):
        return set(re.findall(r"Fl -([a-z][a-z-]*)", text))

    def synopsis_blocks(self):
        """{(command, subcommand or None): option names} of each `.Nm tokenbroker .Cm ...` block."""
        blocks = {}
        for block in self.synopsis.split(".Nm tokenbroker\n")[1:]:
            first = block.splitlines()[0]
            if not first.startswith(".Cm "):
                continue
            words = first[4:].split()
            blocks.setdefault((words[0], words[1] if len(words) > 1 else None), set()).update(self.flags(block))
        return blocks

    def command_items(self):
        """{header line of each `.It Cm` in COMMANDS: the text up to the next one}."""
        items = re.split(r"^(?=\.It Cm )", self.commands, flags=re.M)
        return {item.splitlines()[0]: item for item in items if item.startswith(".It Cm ")}

    def test_the_synopsis_names_each_form_and_its_options(self):
        blocks = self.synopsis_blocks()
        self.assertEqual(self.flags(self.synopsis.split(".Nm tokenbroker\n")[1]), GLOBALS)
        for command in DECL["commands"]:
            name = command["name"]
            if command["helpTopic"] != name:
                continue  # listed on its topic's line (`get | store | erase | capability`)
            with self.subTest(command=name):
                keys = [k for k in blocks if k[0] == name]
                self.assertTrue(keys, "no synopsis of " + name)
                declared = set().union(*(own_options(f) for f in command["forms"]))
                self.assertEqual(set().union(*(blocks[k] for k in keys)), declared)
                if command["forms"][0].get("subcommand"):
                    text = " ".join(self.synopsis.split(".Cm " + name)[1:])
                    for form in command["forms"]:
                        self.assertRegex(text, r"\b" + form["subcommand"] + r"\b")

    def test_each_command_has_its_item_with_its_options(self):
        items = self.command_items()
        for command in DECL["commands"]:
            for form in command["forms"]:
                words = form_words(command, form)
                with self.subTest(form=words):
                    if command["helpTopic"] != command["name"]:
                        header = [h for h in items if re.search(r"\b%s\b" % command["name"], h)]
                    elif form.get("subcommand") and len(command["forms"]) > 2:
                        header = [h for h in items if h.startswith(".It Cm " + command["name"] + " ")
                                  and re.search(r"\b%s\b" % form["subcommand"], h)]
                    else:
                        header = [h for h in items if h.split()[2:2 + len(words)] == words]
                    self.assertEqual(len(header), 1, "no single '.It Cm %s' in COMMANDS" % " ".join(words))
                    item = items[header[0]]
                    described = self.flags(header[0]) | set(re.findall(r"^\.It Fl -([a-z-]+)", item, re.M))
                    own = own_options(form)
                    self.assertLessEqual(own, described | self.flags(item))
                    # An item's header and its option list name its command's options only.
                    siblings = set().union(*(own_options(f) for f in command["forms"]))
                    self.assertLessEqual(described, siblings)

    def test_the_docker_helpers_actions(self):
        self.assertIn(".Nm docker-credential-tokenbroker\n.Cm " + " | ".join(DECL["dockerActions"]) + "\n",
                      self.synopsis)

    def test_global_options_section_and_no_undeclared_option(self):
        section = self.page.split(".Sh GLOBAL OPTIONS\n")[1].split(".Sh ")[0]
        self.assertEqual(set(re.findall(r"^\.It Fl -([a-z-]+)", section, re.M)), GLOBALS)
        self.assertLessEqual(self.flags(self.page), every_option())


class ReadmeTest(unittest.TestCase):

    def test_the_commands_section_is_every_usage(self):
        readme = read(README)
        section = readme.split("\n## Commands\n")[1].split("\n## ")[0]
        block = section.split("```\n")[1]
        want = [c["usage"][len("usage: "):] for c in DECL["commands"] if c["helpTopic"] == c["name"]]
        self.assertEqual(block.splitlines(), want)

    def test_tokenbroker_command_lines_use_declared_options(self):
        """Every `tokenbroker COMMAND ...` in README (up to `--`, a pipe, `;`, `&&` or the end of the
        code span) names a declared command and only options of it or global ones."""
        seen = 0
        for match in re.finditer(r"(?<![\w/-])tokenbroker((?: [^\s`|;&)'\"]+)+)", read(README)):
            words = match.group(1).split()
            words = words[:words.index("--")] if "--" in words else words
            options = {w[2:].split("=")[0] for w in words if w.startswith("--")}
            plain = [w for w in words if not w.startswith("-")]
            if not plain or plain[0] not in COMMANDS or plain[0] == "help":
                continue
            seen += 1
            command = COMMANDS[plain[0]]
            allowed = GLOBALS | {"help"} | set().union(*(form_options(f) for f in command["forms"]))
            with self.subTest(line=match.group(0)):
                self.assertLessEqual(options, allowed)
        self.assertGreater(seen, 20)


class CompletionTest(ShellCompletionTests, BrokerTestCase):
    """Each shell offers, for every form, exactly its declared subcommands, options and choices."""
    keyring = False

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config() + "\n[account home-lab]\nprovider = azure\nclient-id = c\n")

    def cases(self):
        cases = [("tokenbroker ", set(COMMANDS)), ("tokenbroker --", GLOBALS_OFFER)]
        for command in DECL["commands"]:
            if command["forms"][0].get("subcommand"):
                cases.append(("tokenbroker %s " % command["name"], {f["subcommand"] for f in command["forms"]}))
            for form in command["forms"]:
                prefix = "tokenbroker " + " ".join(form_words(command, form))
                options = {"--" + o for o in form_options(form)} | {"--help"}
                cases.append((prefix + " --", options))
                named = prefix + (" work" if form["arguments"] else "")
                for option in form["options"]:
                    value = option.get("value")
                    if value and value["kind"] == "choice":
                        cases.append(("%s --%s " % (named, option["name"]), set(value["choices"])))
                    if value and form["arguments"][:1] == ["ACCOUNT"] and option["name"] != "url":
                        # The option's value is not the ACCOUNT: accounts come next.
                        cases.append(("%s --%s x " % (prefix, option["name"]), {"work", "home-lab"}))
                    if value:
                        # Nor is it the end of the options (a shell need not offer it again).
                        given = "--" + option["name"]
                        cases.append(("%s %s x --" % (named, given), options - {given}, {given}))
        return [case if len(case) == 3 else case + (frozenset(),) for case in cases]

    def assert_offer(self, line, offered, want, optional=frozenset()):
        if line.split(" ")[-1].startswith("-"):
            # exec ACCOUNT -- COMMAND: a shell may offer the `--` too.
            extra = GLOBAL_OFFER | optional | ({"--"} if line.startswith("tokenbroker exec ") else set())
            self.assertEqual(offered - (extra - want), want)
        else:
            self.assertEqual(offered, want)


GLOBALS_OFFER = {"--" + g for g in GLOBALS} | {"--help"}

if __name__ == "__main__":
    unittest.main()
