"""The real gcloud under `tokenbroker exec` (interface.md §9; bug-cases-3.md X10) with an empty
CLOUDSDK_CONFIG: gcloud finds no credentials of its own, decides from the metadata endpoint that it
runs on Compute Engine, and uses the account: `auth print-access-token` (a token the emulator
accepts), `auth list` (the account's email), `config get-value project`; then again with gcloud's
`gce` cache file holding `False` from an earlier run outside exec. gcloud takes seconds to start:
the runs are few, and each test shares them. Skipped, saying so, where gcloud is not installed.
"""
import os
import shutil
import subprocess
import time
import unittest

from test_exec import ExecTestCase

GCLOUD = shutil.which("gcloud")
EMAIL = "user1@example.test"
# gcloud's own chatter off (no update check, no prompts, no usage report): none of it is about
# credentials, and each would reach the network.
QUIET = {"CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK": "1", "CLOUDSDK_CORE_DISABLE_PROMPTS": "1",
         "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING": "1"}
# The three commands in one exec, each output on a line of its own after a marker.
SCRIPT = ('echo "== token"; gcloud auth print-access-token; echo "== list"; '
          'gcloud auth list --format="value(account)"; echo "== project"; gcloud config get-value project')


@unittest.skipUnless(GCLOUD, "gcloud is not installed (it is on the development machines): the gcloud tests did not run")
class GcloudTest(ExecTestCase):

    def setUp(self):
        super().setUp()
        self.cloudsdk = os.path.join(self.tmp, "gcloud-config")
        os.mkdir(self.cloudsdk)
        self.google_signed_in()
        self.write_config(self.default_config(extra_broker="agent = off")
                          + self.google_config(extra="project = demo-proj\nproject-number = 314159265358"))

    def gcloud_env(self):
        return self.env(CLOUDSDK_CONFIG=self.cloudsdk, **QUIET)

    def run_gcloud(self, extra=""):
        """SCRIPT (and `extra`) under exec: {marker: [lines]}, and the CompletedProcess."""
        r = self.sh(SCRIPT + extra, accounts=("g",), env=self.gcloud_env(), timeout=120)
        sections, current = {}, None
        for line in r.stdout.decode().splitlines():
            if line.startswith("== "):
                current = sections.setdefault(line[3:], [])
            elif current is not None and line.strip():
                current.append(line.strip())
        return sections, r

    def assert_gcloud_uses_the_account(self, sections, r):
        self.assertEqual(r.returncode, 0, r.stderr)
        token = sections["token"]
        self.assertEqual(len(token), 1, r.stderr)
        info = self.emu.validate_access_token(token[0])
        self.assertTrue(info and info["active"], info)
        self.assertEqual(sections["list"], [EMAIL], r.stderr)
        self.assertEqual(sections["project"], ["demo-proj"], r.stderr)
        self.assert_no_secret_leak(r)

    def test_print_access_token_auth_list_and_project_with_an_empty_config(self):
        start = time.monotonic()
        sections, r = self.run_gcloud()
        seconds = time.monotonic() - start
        self.assert_gcloud_uses_the_account(sections, r)
        print("gcloud: three commands under exec took %.1f s" % seconds)
        # gcloud ran in exec's own config directory, removed with it: the user's has nothing of
        # it (no `gce` answer, no credentials.db listing the account, no access_tokens.db holding
        # its token), so a plain gcloud after exec knows no account and has no token.
        self.assertEqual(os.listdir(self.cloudsdk), [])
        self.assertFalse([n for n in os.listdir(os.path.join(self.runtime, "tokenbroker")) if n.startswith("gcloud-")])
        start = time.monotonic()
        plain = subprocess.run(["gcloud", "auth", "print-access-token", "--account", EMAIL], env=self.gcloud_env(),
                               capture_output=True, timeout=60)
        self.assertNotEqual(plain.returncode, 0)
        self.assertNotIn(sections["token"][0].encode(), plain.stdout + plain.stderr)
        self.assertLess(time.monotonic() - start, 15)

    def test_a_stale_false_in_gclouds_gce_cache_and_the_users_own_configuration(self):
        """gcloud trusts $CLOUDSDK_CONFIG/gce for 10 minutes after its mtime: a `False` left by a
        run outside exec would make it ignore the endpoint. Under exec gcloud has a config
        directory of its own with a copy of the user's active configuration (their region kept,
        their `account` left out, or gcloud would look for that account's credentials), so the
        user's files stay exactly as they were, the `False` included."""
        cache = os.path.join(self.cloudsdk, "gce")
        with open(cache, "w") as f:
            f.write("False")
        os.utime(cache, (time.time() - 5, time.time() - 5))
        os.mkdir(os.path.join(self.cloudsdk, "configurations"))
        properties = os.path.join(self.cloudsdk, "configurations", "config_default")
        with open(properties, "w") as f:
            f.write("[core]\naccount = someone-else@example.test\n\n[compute]\nregion = europe-west1\n")
        before = {p: (open(p).read(), os.stat(p).st_mtime) for p in (cache, properties)}
        sections, r = self.run_gcloud(extra='; echo "== region"; gcloud config get-value compute/region')
        self.assert_gcloud_uses_the_account(sections, r)
        self.assertEqual(sections["region"], ["europe-west1"], r.stderr)
        self.assertEqual({p: (open(p).read(), os.stat(p).st_mtime) for p in (cache, properties)}, before)
        self.assertEqual(sorted(os.listdir(self.cloudsdk)), ["configurations", "gce"])


if __name__ == "__main__":
    unittest.main()
