"""`store = encrypted-file` under stress: the agent SIGKILLed again and
again during rotating refreshes leaves a file that authenticates and holds the newest refresh
token; two agents writing one file at once lose no item; the passphrase is in no process's argv
or environment, no log and no stderr; the key sits in locked memory only while unlocked."""
import glob
import os
import random
import subprocess
import threading
import time
import unittest

import sodium_file
from harness import TOKENBROKER
from test_encrypted_store import PASSPHRASE, EncryptedStoreCase


def vm_locked_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmLck:"):
                return int(line.split()[1])
    return 0


class CrashSafetyTest(EncryptedStoreCase):

    def test_sigkill_during_30_rotating_refreshes(self):
        """Each round: a forced refresh (the emulator rotates the refresh token) and a SIGKILL of
        the agent at a random moment. After every kill the file authenticates with libsodium and
        holds a refresh token the emulator issued; whenever the caller got its token, the file
        already held the newest one (it is written before the answer)."""
        self.signed_in()
        rng = random.Random(10)
        answered = 0
        for round in range(30):
            p = subprocess.Popen([TOKENBROKER, "token", "get", "work", "--force-refresh"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env())
            time.sleep(rng.uniform(0, 0.15))
            self.kill_agent()
            out, err = p.communicate(timeout=60)
            items = sodium_file.items(PASSPHRASE, self.store_path)  # raises unless it authenticates
            refresh = items["refresh-token:work"]["refresh_token"]
            self.assertIn(refresh, self.emu.store.refresh_tokens)
            if p.returncode == 0:
                answered += 1
                self.assertEqual(refresh, self.newest_refresh_token(), "round %d" % round)
                self.assertTrue(self.emu.validate_access_token(out.decode().strip()))
            else:
                self.assertIn(p.returncode, (4, 5), err)
            r = self.unlock()
            self.assertEqual(r.returncode, 0, (round, r.stderr))
        final = self.run_broker("token", "get", "work", "--force-refresh")
        self.assertEqual(final.returncode, 0, final.stderr)
        items = sodium_file.items(PASSPHRASE, self.store_path)
        self.assertEqual(items["refresh-token:work"]["refresh_token"], self.newest_refresh_token())
        print("crash rounds answered before the kill: %d of 30" % answered)

    def test_two_agents_writing_one_file_lose_nothing(self):
        """Two agents (two sockets, one file) each refresh their own account at the same time, 8
        times: every rotated refresh token lands, none overwrites the other account's."""
        self.write_config(self.default_config(extra_broker="store = encrypted-file\n") + f"""
[account other]
provider = azure
tenant = contoso.example
client-id = {self.emu_client_id()}
authority = {self.emu.base_url}
scopes = https://graph.microsoft.com/User.Read
""")
        self.signed_in()
        rc, _, err = self.login("other")
        self.assertEqual(rc, 0, err)
        os.makedirs(os.path.join(self.runtime, "second"), mode=0o700)
        second = self.env(TOKENBROKER_AGENT_SOCKET=os.path.join(self.runtime, "second", "agent.sock"))
        self.addCleanup(self.kill_agent, second["TOKENBROKER_AGENT_SOCKET"])
        r = self.unlock(env=second)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.run_broker("token", "get", "other", env=second).returncode, 0)
        self.assertIsNotNone(self.agent_pid(second["TOKENBROKER_AGENT_SOCKET"]))

        failures = []

        def refresh(account, env):
            for _ in range(8):
                r = self.run_broker("token", "get", account, "--force-refresh", env=env)
                if r.returncode != 0:
                    failures.append((account, r.stderr))

        threads = [threading.Thread(target=refresh, args=("work", self.env())),
                   threading.Thread(target=refresh, args=("other", second))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(failures, [])
        items = sodium_file.items(PASSPHRASE, self.store_path)
        by_family = {}
        for t in self.emu.store.refresh_tokens.values():
            if t.created >= by_family.get(t.family, (None, -1))[1]:
                by_family[t.family] = (t.token, t.created)
        newest = {token for token, _ in by_family.values()}
        for account in ("work", "other"):
            self.assertIn(items["refresh-token:%s" % account]["refresh_token"], newest, account)
        self.assertEqual(len([k for k in items if k.startswith("access-token:")]), 2, sorted(items))

    def emu_client_id(self):
        from harness import CLIENT_ID
        return CLIENT_ID


class SecrecyTest(EncryptedStoreCase):

    def scan_processes(self, needle):
        """Every process whose argv or environment holds `needle`."""
        found = []
        for d in glob.glob("/proc/[0-9]*"):
            for name in ("cmdline", "environ"):
                try:
                    with open(os.path.join(d, name), "rb") as f:
                        if needle in f.read():
                            found.append((d, name))
                except OSError:
                    pass
        return found

    def test_passphrase_never_in_argv_environment_logs_or_stderr(self):
        log = open(os.path.join(self.tmp, "agent.log"), "wb")
        agent = subprocess.Popen([TOKENBROKER, "--verbose", "agent", "run"], stdout=log, stderr=log, env=self.env())
        self.addCleanup(agent.kill)
        deadline = time.time() + 30
        while self.run_broker("agent", "status").returncode != 0 and time.time() < deadline:
            time.sleep(0.05)
        read_end, write_end = os.pipe()
        unlock = subprocess.Popen([TOKENBROKER, "--verbose", "unlock", "--passphrase-fd", str(read_end), "--create"],
                                  pass_fds=(read_end,), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=self.env())
        os.close(read_end)
        os.write(write_end, PASSPHRASE[:10])
        time.sleep(0.3)
        self.assertEqual(self.scan_processes(PASSPHRASE[:10]), [])
        os.write(write_end, PASSPHRASE[10:] + b"\n")
        os.close(write_end)
        out, err = unlock.communicate(timeout=60)
        self.assertEqual(unlock.returncode, 0, err)
        self.assertEqual(self.scan_processes(PASSPHRASE), [])

        pid = agent.pid  # the front execs the full program: same pid
        self.assertGreater(vm_locked_kib(pid), 0, "the key is in mlock'ed memory")
        if os.getuid() != 0:
            with self.assertRaises(PermissionError):  # PR_SET_DUMPABLE=0: /proc/PID is root's
                open("/proc/%d/environ" % pid, "rb").read()
        rc, lout, lerr = self.login()
        self.assertEqual(rc, 0, lerr)
        got = self.run_broker("--verbose", "token", "get", "work")
        self.assertEqual(got.returncode, 0, got.stderr)
        self.assertEqual(self.run_broker("--verbose", "lock").returncode, 0)
        deadline = time.time() + 10
        while vm_locked_kib(pid) > 0 and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(vm_locked_kib(pid), 0, "the key was unlocked and zeroed on lock")
        agent.terminate()
        agent.wait(30)
        log.close()
        with open(os.path.join(self.tmp, "agent.log"), "rb") as f:
            agent_log = f.read()
        key = sodium_file.derive(PASSPHRASE, self.store_bytes())
        for blob in (out, err, lout, lerr, got.stderr, agent_log, self.store_bytes()):
            self.assertNotIn(PASSPHRASE, blob)
            self.assertNotIn(key.hex().encode(), blob)
            self.assertNotIn(key, blob)


if __name__ == "__main__":
    unittest.main()
