"""README's "Step by step, by hand" block, run as it stands, in a shell on a private D-Bus session.

A newcomer copies that block into `dbus-run-session -- bash` in the checkout: if a flag, a file
name or a step in it goes stale, this fails. The only change made to the text is the build folder
(`$PWD/.build/debug` becomes the binaries under test)."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import BIN_DIR, ROOT

MARKER = "<!-- by-hand: test_readme_by_hand.py runs this block as it is -->"


def by_hand_block():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    found = re.search(re.escape(MARKER) + r"\n```sh\n(.*?)\n```\n", text, re.S)
    if not found:
        raise AssertionError("README.md has no sh block after the by-hand marker")
    return found.group(1)


class ReadmeByHandTest(unittest.TestCase):
    def test_the_block_runs_as_written(self):
        block = by_hand_block()
        self.assertIn("$PWD/.build/debug", block)
        script = block.replace("$PWD/.build/debug", BIN_DIR)
        scratch = tempfile.mkdtemp(prefix="tb-byhand-")
        self.addCleanup(shutil.rmtree, scratch, ignore_errors=True)
        # The shell a newcomer has: no bus, no test variables, mktemp under our scratch folder.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("DBUS_", "TOKENBROKER_", "GIT_", "XDG_"))}
        env["TMPDIR"] = scratch
        p = subprocess.run(["dbus-run-session", "--", "bash", "-euo", "pipefail", "-c", script],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lines = p.stdout.splitlines()
        # token get printed the access token right after the sign-in line, and git got it.
        signed_in = [i for i, line in enumerate(lines) if line.startswith("signed in to work as ")]
        self.assertEqual(len(signed_in), 1, p.stdout)
        token = lines[signed_in[0] + 1]
        self.assertRegex(token, r"^\S{8,}$")
        self.assertIn("password=" + token, lines)
        self.assertIn("host=git.contoso.example", lines)
        self.assertIn("[account work]", lines)
        self.assertNotIn(token, p.stderr)
        # Nothing is left running from the block (agent stopped, emulator killed).
        left = subprocess.run(["pgrep", "-f", scratch], capture_output=True, text=True).stdout.split()
        self.assertEqual(left, [], "processes left: %s" % left)


if __name__ == "__main__":
    unittest.main()
