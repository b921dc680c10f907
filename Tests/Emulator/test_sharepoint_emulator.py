"""Self-test of the emulator's SharePoint endpoints (Tests/Emulator/idp/sharepoint.py).

Run from the repository root: python3 -m unittest discover -s Tests/Emulator -p 'test_*.py'
"""
import json
import os
import ssl
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from idp_emulator import Emulator  # noqa: E402

CERTS = tempfile.TemporaryDirectory(prefix="idp-sp-test-")


class SharePointEndpointsTest(unittest.TestCase):
    def setUp(self):
        self.emu = Emulator(https=True, cert_dir=CERTS.name).start()
        self.addCleanup(self.emu.stop)
        self.ctx = ssl.create_default_context(cafile=self.emu.ca_file)
        self.site = self.emu.base_url

    def call(self, method, path, headers=None):
        req = urllib.request.Request(self.site + path, method=method, headers=headers or {},
                                     data=b"" if method == "POST" else None)
        try:
            with urllib.request.urlopen(req, context=self.ctx) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def token_for(self, resource):
        rt = self.emu.add_refresh_token("RT-sp")
        body = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": rt, "client_id": "c",
                                       "scope": resource + "/.default offline_access"}).encode()
        req = urllib.request.Request(self.site + "/organizations/oauth2/v2.0/token", data=body)
        with urllib.request.urlopen(req, context=self.ctx) as r:
            return json.loads(r.read())["access_token"]

    def authenticate(self, token):
        return self.call("POST", "/_api/SP.OAuth.NativeClient/Authenticate", {"Authorization": "Bearer " + token})

    def test_token_for_the_site_gets_a_live_spoidcrl(self):
        status, headers, _ = self.authenticate(self.token_for(self.site))
        self.assertEqual(status, 200)
        cookie = headers["Set-Cookie"]
        self.assertTrue(cookie.startswith("SPOIDCRL="), cookie)
        self.assertIn("HttpOnly", cookie)
        self.assertIn("expires=", cookie)
        pair = cookie.split(";")[0]
        self.assertEqual(self.call("GET", "/_api/web", {"Cookie": pair})[0], 200)
        self.emu.sharepoint.expire(pair.split("=", 1)[1])
        status, headers, _ = self.call("GET", "/_api/web", {"Cookie": pair})
        self.assertEqual(status, 403)
        self.assertTrue(headers["X-MSDAVEXT_Error"].startswith("917656"))

    def test_token_for_another_resource_is_refused(self):
        status, headers, _ = self.authenticate(self.token_for("https://other.example.test"))
        self.assertEqual(status, 401)
        self.assertIsNone(headers.get("Set-Cookie"))
        self.assertEqual(self.authenticate("not-a-token")[0], 401)

    def test_web_accepts_fedauth_and_rtfa_or_a_site_bearer(self):
        fedauth, rtfa, _ = self.emu.sharepoint.add_cookies(60)
        self.assertEqual(self.call("GET", "/_api/web", {"Cookie": f"FedAuth={fedauth}; rtFa={rtfa}"})[0], 200)
        self.assertEqual(self.call("GET", "/_api/web", {"Cookie": f"FedAuth={fedauth}"})[0], 403)
        self.assertEqual(self.call("GET", "/_api/web", {"Cookie": "FedAuth=unknown; rtFa=unknown"})[0], 403)
        self.assertEqual(self.call("GET", "/_api/web")[0], 401)
        bearer = {"Authorization": "Bearer " + self.token_for(self.site)}
        self.assertEqual(self.call("GET", "/_api/web", bearer)[0], 200)


if __name__ == "__main__":
    unittest.main()
