"""A randomized fuzz of the git and docker helper parsers through the built binaries (front, agent
and full program), against a config whose only host is git.example.test (interface.md §4, §5;
bug-cases.md B15, B16, B17, B29).

For every request: no crash (no signal, no status >= 128), at most one line on stderr, an answer
within a time bound, and a token only when a strict reference reading of the request names
git.example.test over https. The seed is printed on failure; TB_FUZZ_SEED and TB_FUZZ_SECONDS
replay or lengthen a run.
"""
import os
import random
import subprocess
import time
import urllib.parse

from flows import GIT_GET, FlowTestCase
from harness import TOKENBROKER

HOST = "git.example.test"
KEYS = ["protocol", "host", "path", "username", "password", "url", "capability[]", "authtype", "credential",
        "ephemeral", "password_expiry_utc", "oauth_refresh_token", "wwwauth[]", "state[]", "continue", "quit",
        "", "Host", "HOST", "host ", " host", "host[]"]
VALUES = [HOST, HOST.upper(), HOST + ":443", HOST + ".", "evil.test", HOST + ".evil.test", "evil." + HOST,
          "evil.test%0ahost=" + HOST, "evil.test\u2028host=" + HOST, "evil.test\u0085host=" + HOST, "",
          "https", "http", "HTTPS", "ftp", "authtype", "a" * 70000, "\u00e9", "x=y", "%00", "%0d%0a",
          "https://" + HOST + "/", "https://evil.test/", "https://evil.test%0a@" + HOST + "/",
          "https://" + HOST + "%0a@evil.test/", "https://" + HOST + "%2f@evil.test", "https://user@" + HOST,
          "https://evil.test%2f@" + HOST, "https://" + HOST.replace(".", "%2e"), "https://[::1]/",
          "https://" + HOST + "\u2028", "g\u0131t.example.test", "\u212aevil.test", "https://%zz/"]
SEPARATORS = ["\n", "\r\n", "\r", "\0", "\n\n", "\r\r\n", "\u2028"]


def reference_target(data):
    """(protocol, host) the request is strictly about, or None when it is invalid or incomplete
    (the wire rules of interface.md §4, written independently of the Swift parser)."""
    fields = {}
    for raw in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
        line = raw[:-1] if raw.endswith(b"\r") and raw is not None else raw
        if line == b"":
            break
        if b"\0" in line or b"\r" in line or len(raw) + 1 > 65535 or b"=" not in line:
            return None
        try:
            key, value = line.decode("utf-8").split("=", 1)
        except UnicodeDecodeError:
            return None
        if not key.endswith("[]"):
            if key in fields:
                return None
            fields[key] = value
    proto, host = fields.get("protocol"), fields.get("host")
    if "url" in fields:
        u = fields["url"]
        if "://" not in u:
            return None
        scheme, rest = u.split("://", 1)
        try:
            decoded = urllib.parse.unquote(rest, errors="strict")
        except UnicodeDecodeError:
            return None
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in decoded):
            return None
        authority = rest.split("/")[0].split("?")[0].split("#")[0].rsplit("@", 1)[-1]
        uhost = urllib.parse.unquote(authority)
        if proto is not None and proto != scheme.lower() or host is not None and host.lower() != uhost.lower():
            return None
        proto, host = scheme.lower(), uhost
    if not proto or not host:
        return None
    return proto.lower(), host.lower()


def may_get_token(data):
    target = reference_target(data)
    return target is not None and target[0] == "https" and target[1] in (HOST, HOST + ":443") \
        and target[1].isascii()


class Fuzzer:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def value(self):
        r = self.r
        v = r.choice(VALUES)
        if r.random() < 0.2:
            v = v[:r.randrange(len(v) + 1)] + r.choice(SEPARATORS + ["=", "%0a", "%0d", "\x7f"]) + v[r.randrange(len(v) + 1):]
        return v

    def request(self):
        r = self.r
        lines = []
        if r.random() < 0.8:
            lines.append(("protocol", r.choice(["https", "https", "http", "HTTPS", ""])))
        if r.random() < 0.8:
            lines.append(("host", r.choice([HOST, HOST, "evil.test", HOST.upper(), HOST + ":443"])))
        for _ in range(r.randrange(4)):
            lines.append((r.choice(KEYS), self.value()))
        r.shuffle(lines)
        out = "".join(k + "=" + v + r.choice(SEPARATORS if r.random() < 0.3 else ["\n"]) for k, v in lines)
        if r.random() < 0.5:
            out += "\n"
        data = out.encode("utf-8", "surrogatepass")
        if r.random() < 0.15:  # byte-level mutations: invalid UTF-8, NUL, CR, truncation
            b = bytearray(data)
            for _ in range(r.randrange(1, 4)):
                if not b:
                    break
                i = r.randrange(len(b))
                op = r.randrange(4)
                if op == 0:
                    b[i] = r.choice([0, 13, 10, 0xff, 0xc3, 0x80, 0x3d])
                elif op == 1:
                    del b[i]
                elif op == 2:
                    b[i:i] = bytes([r.randrange(256)])
                else:
                    b = b[:i]
            data = bytes(b)
        return data

    def docker_address(self):
        r = self.r
        base = r.choice(["https://" + HOST, HOST, HOST + ":443", "https://evil.test", "evil.test/" + HOST,
                         "https://evil.test@" + HOST, "https://" + HOST + "@evil.test", HOST.upper() + "/v2/",
                         HOST + "%0a", HOST + "\n" + "evil.test", "", "a" * 70000, "https://" + HOST + "\u2028"])
        if r.random() < 0.3:
            base = self.value()
        return base.encode("utf-8", "surrogatepass") + r.choice([b"", b"\n", b"\r\n", b"\0"])


def docker_may_get_token(data):
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return False
    if "://" in text:
        text = text.split("://", 1)[1]
    for sep in "/?#":
        text = text.split(sep)[0]
    text = text.rsplit("@", 1)[-1].lower()
    return text == HOST


class HelperFuzzTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.signed_in()
        r = self.run_broker("get", input=GIT_GET)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.token = dict(l.split("=", 1) for l in r.stdout.decode().splitlines())["password"].encode()
        self.exe = {}
        for name in ("git-credential-tokenbroker", "docker-credential-tokenbroker"):
            self.exe[name] = os.path.join(self.tmp, name)
            os.symlink(TOKENBROKER, self.exe[name])

    def check(self, argv, data, allowed, seed, env, bound=10):
        start = time.monotonic()
        r = subprocess.run(argv, input=data, capture_output=True, env=env, timeout=bound + 20)
        took = time.monotonic() - start
        what = "seed %d, argv %r, input %r" % (seed, argv[1:], data[:300])
        self.assertGreaterEqual(r.returncode, 0, "killed by a signal: " + what)
        self.assertLess(r.returncode, 128, what)
        self.assertLessEqual(len(r.stderr.splitlines()), 1, "%s: stderr %r" % (what, r.stderr[:500]))
        self.assertLess(took, bound, what)
        for stream in (r.stdout, r.stderr):
            if self.token in stream:
                self.assertTrue(allowed, "token handed out for: " + what)
                self.handed_out += 1
        self.assertNotIn(self.rt_marker(), r.stdout + r.stderr, what)
        return r

    def rt_marker(self):
        if not hasattr(self, "_rt"):
            self._rt = self.stored_refresh_token().encode()
        return self._rt

    def fuzz(self, seconds, env):
        seed = int(os.environ.get("TB_FUZZ_SEED", random.randrange(1 << 30)))
        fz = Fuzzer(seed)
        end = time.monotonic() + seconds
        n = 0
        self.handed_out = 0
        while time.monotonic() < end:
            n += 1
            roll = fz.r.random()
            if roll < 0.6:
                data = fz.request()
                self.check([self.exe["git-credential-tokenbroker"], "get"], data, may_get_token(data), seed, env)
            elif roll < 0.8:
                data = fz.request()
                self.check([TOKENBROKER, "get"], data, may_get_token(data), seed, env)
            elif roll < 0.9:
                data = fz.request()
                action = fz.r.choice(["erase", "store", "capability", "fill", "approve", ""])
                self.check([self.exe["git-credential-tokenbroker"], action], data, False, seed, env)
            else:
                data = fz.docker_address()
                self.check([self.exe["docker-credential-tokenbroker"], "get"], data, docker_may_get_token(data),
                           seed, env)
        if os.environ.get("TB_FUZZ_SECONDS"):
            print("\n  fuzz seed %d: %d requests, %d answered with the token" % (seed, n, self.handed_out))
        self.assertGreater(self.handed_out, 0, "the fuzz never reached the token path (seed %d)" % seed)
        return n

    def test_fuzz_through_the_agent(self):
        n = self.fuzz(float(os.environ.get("TB_FUZZ_SECONDS", "8")), self.env())
        self.assertGreater(n, 50)
        # The token still works: erase calls never dropped what they must not.
        self.assertEqual(self.run_broker("get", input=GIT_GET).returncode, 0)

    def test_fuzz_through_the_full_program(self):
        self.write_config(self.default_config(extra_broker="agent = off"))
        n = self.fuzz(float(os.environ.get("TB_FUZZ_SECONDS", "6")), self.env())
        self.assertGreater(n, 10)
