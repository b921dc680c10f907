"""The git credential helper through real git 2.39 and through the wire protocol (interface.md §4;
bug-cases.md B10, B15, B16, B17; protocols.md §1).

Git runs with a private GIT_CONFIG_GLOBAL and GIT_CONFIG_NOSYSTEM=1; the helper is configured by
the built binary's absolute path, or by name (`tokenbroker`, i.e. `git-credential-tokenbroker` on
PATH, a link to the built `tokenbroker`).
"""
import os
import subprocess
import time
import unittest

from harness import TOKENBROKER, BrokerTestCase

GIT_HOST = "git.example.test"
FALLBACK_HELPER = "!f() { echo username=next; echo password=fallback; }; f"


def parse_lines(data):
    """`key=value` lines as a list of (key, value), in order."""
    text = data.decode() if isinstance(data, bytes) else data
    return [tuple(line.split("=", 1)) for line in text.splitlines() if line]


class GitTestCase(BrokerTestCase):
    """Adds a private git configuration and a `git-credential-tokenbroker` link on PATH."""

    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        os.symlink(TOKENBROKER, os.path.join(self.bin, "git-credential-tokenbroker"))
        self.gitconfig = os.path.join(self.tmp, "gitconfig")
        open(self.gitconfig, "w").close()

    def set_helpers(self, *helpers, key="credential.helper"):
        """Writes the helper chain into the private global config (git quotes the values)."""
        subprocess.run(["git", "config", "--file", self.gitconfig, "--unset-all", key],
                       capture_output=True)
        for h in helpers:
            subprocess.run(["git", "config", "--file", self.gitconfig, "--add", key, h], check=True)

    def git_env(self, **overrides):
        return self.env(GIT_CONFIG_GLOBAL=self.gitconfig, GIT_CONFIG_NOSYSTEM="1",
                        GIT_TERMINAL_PROMPT="0", PATH=self.bin + os.pathsep + os.environ["PATH"],
                        **overrides)

    def git(self, *args, input=b"", timeout=60, **env):
        if isinstance(input, str):
            input = input.encode()
        return subprocess.run(["git"] + list(args), input=input, capture_output=True,
                              env=self.git_env(**env), timeout=timeout, cwd=self.tmp)

    def fill(self, host=GIT_HOST):
        r = self.git("credential", "fill", input=f"protocol=https\nhost={host}\n\n")
        return r, dict(parse_lines(r.stdout))

    def signed_in(self):
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)

    def refresh_token_items(self):
        return [i for i in self.keyring_items("work") if i["attributes"].get("kind") == "refresh-token"]

    def assert_refused(self, r, status=1):
        """Refuse: nothing on stdout, exactly one `tokenbroker: ...` line on stderr, `status`."""
        self.assertEqual(r.stdout, b"")
        self.assertEqual(r.returncode, status, r.stderr)
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("tokenbroker: "), lines)


class GitFillTest(GitTestCase):

    def test_fill_with_absolute_path_helper_returns_a_valid_token(self):
        """B10 (set-up): `git credential fill` with the helper by absolute path returns the
        signed-in username and an access token the provider accepts; approve runs cleanly."""
        self.signed_in()
        self.set_helpers(TOKENBROKER)
        r, cred = self.fill()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(cred["username"], "user1@example.test")
        self.assertTrue(self.emu.validate_access_token(cred["password"]))
        # git 2.39 predates password_expiry_utc (2.40) and drops it; GitWireTest checks it.
        a = self.git("credential", "approve", input=r.stdout + b"\n")
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stderr, b"")

    def test_fill_with_helper_name_on_path(self):
        """B10 (set-up): `credential.helper = tokenbroker` runs `git-credential-tokenbroker` from
        PATH (a link to the front), which acts on the name it was started under."""
        self.signed_in()
        self.set_helpers("tokenbroker")
        r, cred = self.fill()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(cred["password"]))

    def test_reject_drops_only_that_access_token_and_next_fill_refreshes(self):
        """B10: `reject` with the handed-out token drops that access token only; the next fill
        returns a different, fresh token and the refresh-token item still exists."""
        self.signed_in()
        self.set_helpers("tokenbroker")
        r, first = self.fill()
        self.assertEqual(r.returncode, 0, r.stderr)
        rej = self.git("credential", "reject", input=r.stdout + b"\n")
        self.assertEqual(rej.returncode, 0, rej.stderr)
        self.assertEqual(len(self.refresh_token_items()), 1)
        r, second = self.fill()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotEqual(second["password"], first["password"])
        self.assertTrue(self.emu.validate_access_token(second["password"]))
        self.assertEqual(len(self.refresh_token_items()), 1)
        self.assertEqual(len(self.emu.requests(grant_type="refresh_token")), 1)

    def test_erase_with_unknown_password_changes_nothing(self):
        """B10: `erase` with an old or unknown password (or none) deletes nothing, exit 0; the
        next fill returns the same cached token."""
        self.signed_in()
        self.set_helpers(TOKENBROKER)
        r, cred = self.fill()
        before = self.keyring_items()
        for body in ("username=user1@example.test\npassword=AT_OLD_SENTINEL\n",
                     "credential=AT_OLD_SENTINEL\n", "", "password=\n"):
            with self.subTest(body=body):
                e = self.run_broker("erase", input=f"protocol=https\nhost={GIT_HOST}\n{body}\n")
                self.assertEqual(e.returncode, 0, e.stderr)
                self.assertEqual(e.stdout, b"")
        e = self.git("credential", "reject",
                     input=f"protocol=https\nhost={GIT_HOST}\nusername=u\npassword=AT_OLD_SENTINEL\n\n")
        self.assertEqual(e.returncode, 0, e.stderr)
        self.assertEqual(self.keyring_items(), before)
        r, again = self.fill()
        self.assertEqual(again["password"], cred["password"])

    def test_unmatched_host_prints_nothing_and_git_uses_next_helper(self):
        """Unmatched host: nothing printed, exit 0, so git asks the next helper in the chain;
        for our host git stops at our answer."""
        self.signed_in()
        g = self.run_broker("get", input="protocol=https\nhost=other.example.test\n\n")
        self.assertEqual((g.returncode, g.stdout, g.stderr), (0, b"", b""))
        self.set_helpers(TOKENBROKER, FALLBACK_HELPER)
        r, cred = self.fill("other.example.test")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((cred["username"], cred["password"]), ("next", "fallback"))
        r, cred = self.fill()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.emu.validate_access_token(cred["password"]))

    def test_not_signed_in_names_login_and_git_quits(self):
        """B12/B16 kin: a configured host whose account is not signed in: `get` prints only
        `quit=1`, names `tokenbroker login work`, exit 3 (interface.md §4); git stops there, asking
        neither the next helper nor the user."""
        g = self.run_broker("get", input=f"protocol=https\nhost={GIT_HOST}\n\n")
        self.assertEqual((g.returncode, g.stdout), (3, b"quit=1\n"), g.stderr)
        self.assertEqual(g.stderr, b"tokenbroker: 'work' is not signed in; run 'tokenbroker login work'\n")
        self.set_helpers("tokenbroker", FALLBACK_HELPER)
        r, cred = self.fill()
        self.assertEqual(r.returncode, 128, r.stderr)
        self.assertNotIn("password", cred)
        self.assertIn(b"tokenbroker login work", r.stderr)
        self.assertIn(b"told us to quit", r.stderr)
        self.assertNotIn(b"terminal prompts disabled", r.stderr)
        self.assertEqual(self.emu.requests(grant_type="refresh_token"), [])


class GitWireTest(GitTestCase):

    def test_authtype_capability_answers_bearer_only(self):
        """B14/protocols.md §1.4: with `capability[]=authtype` the answer is exactly the bearer
        form (no username/password), with an expiry beyond the refresh margin."""
        self.signed_in()
        for argv0, args in ((None, ("get",)), ("git-credential-tokenbroker", ("get",))):
            with self.subTest(argv0=argv0):
                r = self.run_broker(*args, argv0=argv0, input=(
                    f"capability[]=authtype\ncapability[]=state\nprotocol=https\nhost={GIT_HOST}\n"
                    "wwwauth[]=Bearer realm=\"x\"\n\n"))
                self.assertEqual(r.returncode, 0, r.stderr)
                lines = parse_lines(r.stdout)
                self.assertEqual([k for k, _ in lines], ["capability[]", "authtype", "credential",
                                                         "ephemeral", "password_expiry_utc"])
                d = dict(lines)
                self.assertEqual((d["capability[]"], d["authtype"], d["ephemeral"]),
                                 ("authtype", "Bearer", "1"))
                self.assertTrue(self.emu.validate_access_token(d["credential"]))
                self.assertGreater(int(d["password_expiry_utc"]), time.time() + 300)
        plain = self.run_broker("get", input=f"protocol=https\nhost={GIT_HOST}\n\n")
        self.assertEqual([k for k, _ in parse_lines(plain.stdout)],
                         ["username", "password", "password_expiry_utc"])

    def test_Y06_authtype_answers_bearer_only_where_the_host_takes_it(self):
        """interface.md §4: with `capability[]=authtype`, a host whose challenges offer only Basic
        (GitHub, GitLab, Gitea, Bitbucket on git) gets `username`/`password` and no `authtype=` or
        `credential=`; a Bearer challenge beside it, or Azure DevOps (which takes bearer tokens
        without saying so in every request), gets the bearer form."""
        self.signed_in()
        self.write_config(self.default_config().replace("hosts = git.example.test",
                                                        "hosts = git.example.test dev.azure.com"))
        cases = (
            (GIT_HOST, ['wwwauth[]=Basic realm="Gitea"'], False),
            (GIT_HOST, [], False),
            (GIT_HOST, ['wwwauth[]=Basic realm="Gitea"', 'wwwauth[]=Bearer realm="x"'], True),
            (GIT_HOST, ['wwwauth[]=Basic realm="x", Bearer'], True),
            ("dev.azure.com", [], True),
            ("dev.azure.com", ['wwwauth[]=Basic realm="https://dev.azure.com/"'], True),
        )
        for host, wwwauth, bearer in cases:
            with self.subTest(host=host, wwwauth=wwwauth):
                r = self.run_broker("get", input="capability[]=authtype\nprotocol=https\nhost=%s\n%s\n" % (
                    host, "".join(w + "\n" for w in wwwauth)))
                self.assertEqual(r.returncode, 0, r.stderr)
                keys = [k for k, _ in parse_lines(r.stdout)]
                if bearer:
                    self.assertEqual(keys, ["capability[]", "authtype", "credential", "ephemeral", "password_expiry_utc"])
                else:
                    self.assertEqual(keys, ["username", "password", "password_expiry_utc"])
                    self.assertTrue(self.emu.validate_access_token(dict(parse_lines(r.stdout))["password"]))

    def test_erase_with_the_bearer_credential_drops_it(self):
        """B10: `erase` whose `credential` (the bearer form) is the handed-out token drops that
        access token only: the next `get` refreshes to a different token; the refresh token stays."""
        self.signed_in()
        ask = f"capability[]=authtype\nwwwauth[]=Bearer\nprotocol=https\nhost={GIT_HOST}\n"
        first = dict(parse_lines(self.run_broker("get", input=ask + "\n").stdout))["credential"]
        e = self.run_broker("erase", input=ask + f"authtype=Bearer\ncredential={first}\nephemeral=1\n\n")
        self.assertEqual((e.returncode, e.stdout), (0, b""))
        second = dict(parse_lines(self.run_broker("get", input=ask + "\n").stdout))["credential"]
        self.assertNotEqual(second, first)
        self.assertTrue(self.emu.validate_access_token(second))
        self.assertEqual(len(self.refresh_token_items()), 1)

    def test_host_matches_exactly_with_port_and_ignores_case(self):
        """B15/B16 kin (interface.md §2.1): hosts compare case-insensitively and include the
        port; a longer or shorter name, or another port, is not the configured host."""
        self.signed_in()
        r = self.run_broker("get", input="protocol=https\nhost=GIT.Example.TEST\n\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"password=", r.stdout)
        for host in ("git.example.test:443", "git.example.test:8443", "evil.git.example.test",
                     "git.example.test.evil.example", "example.test", "git.example.tes"):
            with self.subTest(host=host):
                r = self.run_broker("get", input=f"protocol=https\nhost={host}\n\n")
                self.assertEqual((r.returncode, r.stdout), (0, b""), r.stderr)

    def test_capability_action_and_unknown_actions(self):
        """protocols.md §1.1/§1.5: `capability` lists authtype; unknown actions are ignored under
        the helper name and a usage error (64) as `tokenbroker ACTION`."""
        for argv0 in (None, "git-credential-tokenbroker"):
            r = self.run_broker("capability", argv0=argv0)
            self.assertEqual((r.returncode, r.stdout), (0, b"version 0\ncapability authtype\n"))
        r = self.run_broker("frobnicate", argv0="git-credential-tokenbroker",
                            input=f"protocol=https\nhost={GIT_HOST}\n\n")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        r = self.run_broker("frobnicate")
        self.assertEqual(r.returncode, 64)
        self.assertEqual(r.stdout, b"")
        self.assertIn(b"frobnicate", r.stderr)
        r = self.run_broker("store", argv0="git-credential-tokenbroker",
                            input=f"protocol=https\nhost={GIT_HOST}\nusername=u\npassword=p\n\n")
        self.assertEqual((r.returncode, r.stdout), (0, b""))

    MALFORMED = [
        ("B15 repeated host", f"protocol=https\nhost=evil.example\nhost={GIT_HOST}\n\n"),
        ("B15 url with encoded LF in path", f"url=https://evil.example/%0ahost={GIT_HOST}\n\n"),
        ("B15 url with encoded LF in query", f"url=https://evil.example?%0ahost={GIT_HOST}/\n\n"),
        ("B15 url with encoded CR", f"protocol=https\nurl=https://evil.example/%0dhost={GIT_HOST}\n\n"),
        ("B16 blank", "\n"),
        ("B16 protocol only", "protocol=https\n\n"),
        ("B16 empty host", "host=\n\n"),
        ("B16 protocol, empty host", "protocol=https\nhost=\n\n"),
        ("B16 username only", "username=user1\n\n"),
        ("B16 host only", f"host={GIT_HOST}\n\n"),
        ("B16 http to a non-loopback host", f"protocol=http\nhost={GIT_HOST}\n\n"),
        ("B17 lone CR", f"protocol=https\nhost=evil.example\rhost={GIT_HOST}\n\n"),
        ("B17 CR at end of input", f"protocol=https\nhost={GIT_HOST}\r"),
        ("NUL", f"protocol=https\nhost={GIT_HOST}\x00\n\n"),
        ("NUL in key", f"protocol=https\nho\x00st={GIT_HOST}\n\n"),
        ("line over 65535 bytes", f"protocol=https\nhost={GIT_HOST}\npath={'a' * 70000}\n\n"),
        ("several MiB", f"protocol=https\nhost={GIT_HOST}\n" + "wwwauth[]=Basic realm=x\n" * 200000 + "\n"),
        ("line without =", f"protocol=https\nhost={GIT_HOST}\ngarbage\n\n"),
    ]

    def test_malformed_requests_are_refused_without_a_request(self):
        """B15, B16, B17: injected, partial and oversized requests are refused (empty stdout, one
        stderr line, exit 1) and never reach the provider, with and without a cached token."""
        self.signed_in()
        self.bus.secret_tool("clear", "application", "tokenbroker", "kind", "access-token")
        before = len(self.emu.requests())
        for name, body in self.MALFORMED:
            for argv0 in (None, "git-credential-tokenbroker"):
                with self.subTest(name, argv0=argv0):
                    self.assert_refused(self.run_broker("get", argv0=argv0, input=body))
        self.assertEqual(len(self.emu.requests()), before)
        # With a cached access token nothing would reach the provider anyway: stdout must stay empty.
        ok = self.run_broker("get", input=f"protocol=https\nhost={GIT_HOST}\n\n")
        self.assertIn(b"password=", ok.stdout)
        for name, body in self.MALFORMED:
            with self.subTest(name, cached=True):
                self.assert_refused(self.run_broker("get", input=body))

    def test_unicode_line_breaks_do_not_split_lines(self):
        """B17: U+2028, U+2029 and U+0085 in place of CR are not line breaks, so the request is
        about a host no account serves: no token, no provider request."""
        self.signed_in()
        self.bus.secret_tool("clear", "application", "tokenbroker", "kind", "access-token")
        before = len(self.emu.requests())
        for sep in ("\u2028", "\u2029", "\u0085"):
            with self.subTest(sep=repr(sep)):
                r = self.run_broker("get", input=f"protocol=https\nhost=evil.example{sep}host={GIT_HOST}\n\n")
                self.assertEqual(r.stdout, b"")
                self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertEqual(len(self.emu.requests()), before)


if __name__ == "__main__":
    unittest.main()
