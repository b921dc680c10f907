"""Whose proxy a refresh takes (interface.md §8; README "The agent"): the caller's, not that of the
process that started the agent. The emulator is reached under a name that is not loopback
(`idp.example.test`, in its certificate), which only the recording CONNECT proxies of
connect_proxy.py resolve (to 127.0.0.1): a refresh that takes no proxy, or the wrong one, fails
or shows in the wrong proxy's log."""
import socket
import subprocess

from agent_flows import AgentTestCase
from connect_proxy import ConnectProxy
from harness import TOKENBROKER

NAME = "idp.example.test"


def dead_port():
    """A local port where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ProxyTest(AgentTestCase):

    def setUp(self):
        super().setUp()
        self.proxies = [ConnectProxy().start() for _ in range(2)]
        for p in self.proxies:
            self.addCleanup(p.stop)
        port = self.emu.base_url.rsplit(":", 1)[1]
        self.authority = "https://%s:%s" % (NAME, port)
        self.write_config(self.default_config().replace("authority = " + self.emu.base_url,
                                                        "authority = " + self.authority))

    def proxied(self, proxy_url, **extra):
        """The test's environment with only `HTTPS_PROXY` set among the proxy variables."""
        env = self.env(**extra)
        for name in ("https_proxy", "http_proxy", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
            env.pop(name, None)
        env["HTTPS_PROXY"] = proxy_url
        return env

    def test_Y15_each_refresh_takes_its_callers_proxy(self):
        """The agent is started by a process whose HTTPS_PROXY names a port where nothing listens
        (a debugging proxy since closed); a caller whose HTTPS_PROXY names proxy A gets a fresh
        token through A (A logs the CONNECT to the provider), and one naming proxy B through B;
        the agent's own setting is never used."""
        first, second = self.proxies
        login = subprocess.Popen([TOKENBROKER, "login", "work", "--device-code"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=self.proxied(first.url))
        self.emu_approve_when_pending()
        _, err = login.communicate(timeout=60)
        self.assertEqual(login.returncode, 0, err)
        stale = self.proxied("http://127.0.0.1:%d" % dead_port())
        r = self.run_broker("agent", "start", env=stale)
        self.assertEqual(r.returncode, 0, r.stderr)
        for proxy in (first, second, first):
            before = len(proxy.connects())
            refreshes = len(self.emu.requests(grant_type="refresh_token"))
            r = self.run_broker("token", "get", "work", "--force-refresh", env=self.proxied(proxy.url), timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(self.emu.validate_access_token(r.stdout.decode().strip()))
            self.assertEqual(len(self.emu.requests(grant_type="refresh_token")), refreshes + 1)
            self.assertGreater(len(proxy.connects()), before, "the refresh did not go through the caller's proxy")
            self.assertTrue(all(t.startswith(NAME + ":") for t in proxy.connects()), proxy.connects())
