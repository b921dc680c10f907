"""Two Azure DevOps-style organisations in two tenants on one host, with real git 2.39 (which
sends `path` with `credential.useHttpPath` but no `wwwauth[]`) against a local HTTPS git server
(interface.md §2.1 `[host HOST/PATH]`, §4 `path`; bug-cases-3.md X13).

The server serves `/org1/p/_git/r` and `/org2/p/_git/r`, each accepting only access tokens of its
own tenant (the emulator's introspection says whose a token is: its `tid`), and answers 401 as
Azure DevOps does: `WWW-Authenticate: Bearer authorization_uri=…/TENANT` and `Basic`.
"""
import os
import subprocess
import unittest

from harness import CLIENT_ID
from test_git_clone import GitServerTestCase, _GitHTTPHandler
from test_git_fetch import helper_actions

T1 = "11111111-aaaa-4aaa-8aaa-000000000001"
T2 = "22222222-bbbb-4bbb-8bbb-000000000002"
ORGS = {"org1": T1, "org2": T2}


class _TenantGitHandler(_GitHTTPHandler):
    """Each organisation (the first path segment) takes only tokens of its own tenant."""

    def org(self):
        return self.path.lstrip("/").split("/", 1)[0]

    def accepts(self, token):
        info = self.server.validate(token)
        ok = bool(info) and info["tid"] == ORGS.get(self.org())
        self.server.answers.append((self.org(), info and info["tid"], ok))
        return ok

    def challenges(self):
        tenant = ORGS.get(self.org(), T1)
        return [f"Bearer authorization_uri=https://login.microsoftonline.com/{tenant}", 'Basic realm="https://x/"']


class GitOrganisationsTest(GitServerTestCase):

    def setUp(self):
        super().setUp()
        self.server.RequestHandlerClass = _TenantGitHandler
        self.server.answers = []
        bare = os.path.join(self.server.root, "repo.git")
        for org in ORGS:
            dest = os.path.join(self.server.root, org, "p", "_git", "r")
            os.makedirs(os.path.dirname(dest))
            subprocess.run(["git", "clone", "-q", "--bare", bare, dest], check=True, env=self.git_env())
        self.urls = {org: f"https://{self.host}/{org}/p/_git/r" for org in ORGS}

    def accounts_config(self, path_groups=True):
        groups = f"\n[host {self.host}]\naccount = work\n"
        if path_groups:
            groups += f"\n[host {self.host}/org2]\naccount = work2\n"
        return f"""[broker]
ca-file = {self.ca_file}
login-timeout = 60

[account work]
provider = azure
tenant = {T1}
client-id = {CLIENT_ID}
authority = {self.emu.base_url}
scopes = https://graph.microsoft.com/User.Read

[account work2]
provider = azure
tenant = {T2}
client-id = {CLIENT_ID}
authority = {self.emu.base_url}
scopes = https://graph.microsoft.com/User.Read
""" + groups

    def refreshes(self, tenant):
        return len([r for r in self.emu.requests(grant_type="refresh_token") if tenant in r["path"]])

    def clone(self, org, **env):
        dest = os.path.join(self.tmp, "clone-" + org)
        return dest, self.git("clone", "-q", self.urls[org], dest, GIT_SSL_CAINFO=self.ca_file, **env)

    def test_X13_each_organisation_gets_its_own_tenants_token(self):
        """Path groups: setup-git sets useHttpPath for the host; both clones and ten fetch rounds
        of each succeed with the right tenant's token, at most one refresh per account."""
        self.write_config(self.accounts_config())
        for account in ("work", "work2"):
            rc, _, err = self.login(account)
            self.assertEqual(rc, 0, err)
        r = self.run_broker("setup-git", env=self.git_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        use = self.git("config", "--global", "--get", f"credential.https://{self.host}.useHttpPath")
        self.assertEqual(use.stdout.strip(), b"true")

        clones = {}
        for org in ORGS:
            dest, r = self.clone(org, GIT_TRACE="1")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(helper_actions(r.stderr), ["get", "store"])
            clones[org] = dest
        for _ in range(10):
            for org, dest in clones.items():
                r = self.git("-C", dest, "fetch", "-q", GIT_SSL_CAINFO=self.ca_file)
                self.assertEqual(r.returncode, 0, r.stderr)
        # Every authorised request carried its own organisation's tenant; none was refused after
        # a token was offered.
        offered = [a for a in self.server.answers if a[1] is not None]
        self.assertTrue(offered)
        self.assertTrue(all(ok for _, _, ok in offered), offered)
        self.assertEqual({org for org, _, _ in offered}, set(ORGS))
        self.assertLessEqual(self.refreshes(T1), 1)
        self.assertLessEqual(self.refreshes(T2), 1)

        # A request without a path (credential fill by hand) is the host group's: work's tenant.
        r = self.git("credential", "fill", input=f"protocol=https\nhost={self.host}\n\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        password = dict(line.split("=", 1) for line in r.stdout.decode().splitlines())["password"]
        self.assertEqual(self.emu.validate_access_token(password)["tid"], T1)

    def test_X13_erase_of_one_organisations_token_leaves_the_others(self):
        """`erase` of org2's token, with or without `path` (VFS for Git sent none), drops that
        token only: org1's next `get` is the same token, org2's a new one."""
        self.write_config(self.accounts_config())
        for account in ("work", "work2"):
            rc, _, err = self.login(account)
            self.assertEqual(rc, 0, err)

        def get(org):
            r = self.run_broker("get", input=f"protocol=https\nhost={self.host}\npath={org}/p/_git/r\n\n")
            self.assertEqual(r.returncode, 0, r.stderr)
            return dict(line.split("=", 1) for line in r.stdout.decode().splitlines())["password"]

        one, two = get("org1"), get("org2")
        self.assertEqual(self.emu.validate_access_token(two)["tid"], T2)
        for path in ("path=org2/p/_git/r\n", ""):
            with self.subTest(path=path):
                e = self.run_broker("erase", input=f"protocol=https\nhost={self.host}\n{path}username=u\npassword={two}\n\n")
                self.assertEqual((e.returncode, e.stdout), (0, b""), e.stderr)
                self.assertIn(b"account 'work2'", e.stderr)
                self.assertEqual(get("org1"), one)
                new = get("org2")
                self.assertNotEqual(new, two)
                two = new

    def test_X13_without_path_groups_the_other_tenant_fails_with_our_message(self):
        """Only `[host HOST] account = work`: org1 clones; org2's clone gets work's token, is
        refused, and git stops after one get and one erase, with our line naming the group that
        would bind org2 (no loop, no more than one refresh)."""
        self.write_config(self.accounts_config(path_groups=False))
        rc, _, err = self.login("work")
        self.assertEqual(rc, 0, err)
        r = self.run_broker("setup-git", env=self.git_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        use = self.git("config", "--global", "--get", f"credential.https://{self.host}.useHttpPath")
        self.assertEqual(use.stdout, b"")
        _, ok = self.clone("org1")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        _, failed = self.clone("org2", GIT_TRACE="1")
        self.assertNotEqual(failed.returncode, 0)
        self.assertEqual(helper_actions(failed.stderr), ["get", "erase"])
        self.assertIn(b"refused the token of account 'work'", failed.stderr)
        self.assertIn(f"[host {self.host}/ORG]".encode(), failed.stderr)
        self.assertLessEqual(self.refreshes(T1), 1)


if __name__ == "__main__":
    unittest.main()
