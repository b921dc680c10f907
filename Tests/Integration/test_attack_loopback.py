"""Attacks on the loopback redirect listener of `login --browser` (RFC 8252 §7.3, §8.3;
bug-cases.md B26): while the login waits, junk requests (no Host, a foreign Host as after DNS
rebinding, a huge head, 200 parallel connections, slow-loris clients, a wrong state); the real
redirect must still complete, one code only is redeemed, a second delivery of the right state finds
nothing, and the wait times out as configured.
"""
import re
import socket
import subprocess
import threading
import time
import urllib.parse

import fake_browser
from flows import FlowTestCase
from harness import TOKENBROKER

SIGNED_IN = b"signed in to work as user1@example.test\n"


class LoopbackAttackTest(FlowTestCase):
    emulator_options = {"auto_consent": True}

    def start(self, timeout=60):
        self.write_config(self.default_config().replace("login-timeout = 60", "login-timeout = %d" % timeout))
        p = subprocess.Popen([TOKENBROKER, "login", "work", "--no-open"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=self.env())
        self.addCleanup(self._reap, p)
        line = p.stderr.readline().decode()
        url = re.search(r"open (https://\S+)", line).group(1)
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        self.port = urllib.parse.urlsplit(params["redirect_uri"]).port
        return p, url

    def redirect_location(self, url):
        status, headers, body = fake_browser.request(url, self.ca_file)
        self.assertIn("location", headers, body)
        return headers["location"]

    def raw(self, data, timeout=5):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        out = b""
        try:
            s.sendall(data)
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except OSError:
            pass
        finally:
            s.close()
        return out

    def code_redemptions(self):
        return self.emu.requests(grant_type="authorization_code")

    def test_junk_then_the_real_redirect(self):
        p, url = self.start()
        location = self.redirect_location(url)
        query = urllib.parse.urlsplit(location).query
        state = dict(urllib.parse.parse_qsl(query))["state"]
        target = "/?code=ATTACKER&state=" + state
        # A foreign Host (DNS rebinding) with the right state and a planted code: refused.
        self.assertTrue(self.raw(("GET %s HTTP/1.1\r\nHost: evil.test:%d\r\n\r\n" % (target, self.port)).encode())
                        .startswith(b"HTTP/1.1 400"))
        # Two Host headers, the foreign one first or last: refused either way.
        for hosts in (("evil.test", "127.0.0.1:%d" % self.port), ("127.0.0.1:%d" % self.port, "evil.test")):
            head = "GET %s HTTP/1.1\r\nHost: %s\r\nHost: %s\r\n\r\n" % (target, *hosts)
            self.assertTrue(self.raw(head.encode()).startswith(b"HTTP/1.1 400"), hosts)
        # A wrong state; a huge head; garbage; a request line without a target.
        self.assertTrue(self.raw(b"GET /?code=X&state=WRONG HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % self.port)
                        .startswith(b"HTTP/1.1 400"))
        self.assertTrue(self.raw(b"GET /" + b"a" * 40000 + b" HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 431"))
        self.raw(b"\x00\xff" * 5000 + b"\r\n\r\n")
        self.raw(b"GET\r\n\r\n")
        # 200 parallel connections that send nothing, and slow-loris clients, while the real
        # redirect arrives.
        held = []
        for _ in range(200):
            try:
                held.append(socket.create_connection(("127.0.0.1", self.port), timeout=5))
            except OSError:
                pass
        stop = threading.Event()

        def crawl():
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                for b in b"GET /?code=SLOW&state=" + state.encode() + b" HTTP/1.1\r\n":
                    if stop.wait(0.5):
                        break
                    s.send(bytes([b]))
                s.close()
            except OSError:
                pass

        crawlers = [threading.Thread(target=crawl) for _ in range(3)]
        for t in crawlers:
            t.start()
        self.addCleanup(lambda: [t.join() for t in crawlers])
        self.addCleanup(stop.set)
        time.sleep(0.3)
        status, _, page = fake_browser.request(location)
        for s in held:
            s.close()
        self.assertEqual(status, 200, page)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(out, SIGNED_IN)
        codes = [e["form"].get("code") for e in self.code_redemptions()]
        self.assertEqual(len(codes), 1)
        self.assertNotIn("ATTACKER", codes)
        self.assertNotIn("SLOW", codes)
        # The right state a second time: nothing listens any more.
        self.assertEqual(fake_browser.request(location)[0], "refused")

    def test_a_held_slot_never_blocks_the_redirect_for_long(self):
        """Idle connections fill every slot the listener reads at once; the real redirect,
        made the way a browser retries (a new connection), still gets through promptly."""
        p, url = self.start()
        location = self.redirect_location(url)
        held = [socket.create_connection(("127.0.0.1", self.port), timeout=5) for _ in range(64)]
        self.addCleanup(lambda: [s.close() for s in held])
        time.sleep(0.3)
        start = time.monotonic()
        status, _, page = fake_browser.request(location)
        self.assertEqual(status, 200, page)
        self.assertLess(time.monotonic() - start, 3)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)

    def test_wait_times_out_despite_a_stream_of_junk(self):
        p, url = self.start(timeout=3)
        stop = threading.Event()

        def junk():
            while not stop.is_set():
                try:
                    self.raw(b"GET /?state=x HTTP/1.1\r\n\r\n", timeout=1)
                except OSError:
                    pass
                time.sleep(0.05)

        t = threading.Thread(target=junk)
        t.start()
        self.addCleanup(t.join)
        self.addCleanup(stop.set)
        start = time.monotonic()
        out, err = p.communicate(timeout=30)
        self.assertLess(time.monotonic() - start, 10)
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(out, b"")
        self.assertEqual(self.code_redemptions(), [])
