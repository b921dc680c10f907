"""The agent's resident memory: libcurl is loaded at its first refresh, not at start,
and the code a refresh ran is given back after it, libcurl's tree's and the program's own (the
warm answers of the next hour need none of it).
"""
import json
import unittest

from agent_flows import AgentTestCase


def mappings(pid):
    """[(permissions, path, resident KiB)] of the file mappings of `pid` (/proc/PID/smaps)."""
    found, current = [], None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            fields = line.split()
            if "-" in fields[0] and ":" not in fields[0]:
                current = (fields[1], fields[5]) if len(fields) > 5 and fields[5].startswith("/") else None
            elif fields[0] == "Rss:" and current:
                found.append(current + (int(fields[1]),))
    return found


class AgentMemoryTest(AgentTestCase):

    def core_code_kib(self, pid):
        """Resident KiB of tokenbroker-core's own code and constants (its read-only mappings)."""
        return sum(kib for perms, path, kib in mappings(pid) if path.endswith("/tokenbroker-core") and "w" not in perms)

    def test_libcurl_is_loaded_at_the_first_refresh_and_its_code_given_back_after_it(self):
        self.signed_in()
        self.assertEqual(self.run_broker("token", "get", "work", timeout=30).returncode, 0)
        pid = self.agent_pid()
        self.assertIsNotNone(pid)
        try:
            warm = mappings(pid)
        except PermissionError:
            self.skipTest("SKIPPED LOUDLY: the agent is not dumpable, so its smaps is root's to read")
        self.assertEqual([m for m in warm if "libcurl" in m[1]], [], "a warm agent has libcurl mapped")
        before = {path for _, path, _ in warm}
        warm_core = self.core_code_kib(pid)
        self.assertGreater(warm_core, 0, warm)
        for round in range(2):
            refreshes = len(self.refresh_requests())
            r = self.run_broker("token", "get", "work", "--force-refresh", timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(self.refresh_requests()), refreshes + 1)
            self.assertEqual(self.agent_pid(), pid, "the refresh ran in the agent")
            loaded = [m for m in mappings(pid) if m[1] not in before]
            self.assertTrue(any("libcurl.so" in path for _, path, _ in loaded), loaded)
            resident_code = [(path, kib) for perms, path, kib in loaded if perms == "r-xp" and kib]
            self.assertEqual(resident_code, [], "round %d: code of libcurl's tree still resident" % round)
            # What the refresh ran of the program itself is given back too: less of its code is
            # resident now than after the warm calls before it.
            core = self.core_code_kib(pid)
            self.assertLess(core, warm_core, "round %d: %d KiB of the program's code resident after the refresh, "
                            "%d KiB before it" % (round, core, warm_core))


if __name__ == "__main__":
    unittest.main()
