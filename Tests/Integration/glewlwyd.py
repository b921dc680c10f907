"""A real Glewlwyd 2.7.5 (Debian's `glewlwyd`) on loopback for the oidc tests: SQLite database from
the package's own schema, configured through its admin REST API; the user's side (sign-in, consent,
device verification) is played over its REST API too.

Facts of this version: it refuses to start when its config names `use_secure_connection` at all
(so it serves plain HTTP, which tokenbroker allows on loopback); its OIDC plugin requires `nonce`;
it compares `redirect_uri` exactly; it answers a dead refresh token with an empty 400.
"""
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import time
import urllib.parse

import loopback_http
from loopback_http import free_port

SCHEMA = "/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz"
BINARY = "/usr/bin/glewlwyd"
ADMIN = ("admin", "password")  # the package's initial administrator
USER = ("alice", "alice-Passw0rd")

CONFIG = """port={port}
bind_address="127.0.0.1"
external_url="http://127.0.0.1:{port}"
login_url="login.html"
api_prefix="api"
static_files_path="/usr/share/glewlwyd/webapp/"
allow_origin="*"
log_mode="console"
log_level="ERROR"
cookie_domain=""
cookie_secure=0
session_expiration=2419200
session_key="GLEWLWYD2_SESSION_ID"
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
user_middleware_module_path="/usr/lib/glewlwyd/user_middleware"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
hash_algorithm = "SHA512"
database =
{{
  type = "sqlite3"
  path = "{db}"
}};
"""


def available():
    return os.path.exists(BINARY) and os.path.exists(SCHEMA)


class Glewlwyd:
    """One server; `plugin(name, ...)` adds an OIDC plugin instance (an issuer) and `client(...)`
    a client."""

    def __init__(self, directory):
        self.dir = directory
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        self.proc = None
        self.admin_cookie = None
        self.user_cookie = None

    # --- lifecycle

    def start(self, timeout=30):
        os.makedirs(self.dir, exist_ok=True)
        db = os.path.join(self.dir, "glewlwyd.db")
        with gzip.open(SCHEMA, "rt") as f, sqlite3.connect(db) as c:
            c.executescript(f.read())
        conf = os.path.join(self.dir, "glewlwyd.conf")
        with open(conf, "w") as f:
            f.write(CONFIG.format(port=self.port, db=db))
        self.log = open(os.path.join(self.dir, "glewlwyd.log"), "wb")
        self.proc = subprocess.Popen([BINARY, "-c", conf], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                self.admin_cookie = self.login(*ADMIN)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("glewlwyd did not start: " + self.log_text())
        self.api("POST", "/api/user/", {"username": USER[0], "password": USER[1], "name": "Alice",
                                         "email": "alice@example.test", "enabled": True,
                                         "scope": ["g_profile", "openid"]})
        self.user_cookie = self.login(*USER)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()

    def log_text(self):
        try:
            with open(os.path.join(self.dir, "glewlwyd.log"), errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    # --- HTTP

    def request(self, method, path, body=None, cookie=None, form=None, headers=None):
        """(status, headers dict with lower-case names, body bytes); redirects are not followed."""
        return loopback_http.request(self.port, method, path, body=body, form=form, headers=headers, cookie=cookie)

    def api(self, method, path, body=None):
        status, _, text = self.request(method, path, body, cookie=self.admin_cookie)
        if status != 200:
            raise RuntimeError("%s %s: HTTP %d %r" % (method, path, status, text[:500]))
        return json.loads(text) if text else None

    def login(self, username, password):
        status, headers, _ = self.request("POST", "/api/auth", {"username": username, "password": password})
        if status != 200:
            raise RuntimeError("login of %s: HTTP %d" % (username, status))
        return headers["set-cookie"].split(";", 1)[0]

    # --- configuration

    def plugin(self, name, rolling=True, one_use=False, access_token_duration=3600, **extra):
        """An OIDC plugin instance; its issuer is `issuer(name)`."""
        parameters = {
            "iss": self.issuer(name), "jwt-type": "sha", "jwt-key-size": "256", "key": "secret-of-" + name,
            "access-token-duration": access_token_duration, "refresh-token-duration": 1209600,
            "code-duration": 600, "refresh-token-rolling": rolling,
            "refresh-token-one-use": "always" if one_use else "never",
            "allow-non-oidc": False, "auth-type-code-enabled": True, "auth-type-token-enabled": False,
            "auth-type-id-token-enabled": True, "auth-type-none-enabled": True, "auth-type-password-enabled": False,
            "auth-type-client-enabled": True, "auth-type-refresh-enabled": True, "auth-type-device-enabled": True,
            "device-authorization-expiration": 120, "device-authorization-interval": 1,
            "pkce-allowed": True, "pkce-method-plain-allowed": False,
            "introspection-revocation-allowed": True, "introspection-revocation-allow-target-client": True,
            "introspection-revocation-auth-scope": [],
            "name-claim": "on-demand", "email-claim": "mandatory", "scope-claim": "no",
        }
        parameters.update(extra)
        self.api("POST", "/api/mod/plugin/", {"module": "oidc", "name": name, "display_name": name,
                                              "enabled": True, "parameters": parameters})
        return self.issuer(name)

    def issuer(self, plugin):
        return "%s/api/%s" % (self.base, plugin)

    def client(self, client_id, secret=None, redirect_uris=(), methods=("client_secret_basic", "client_secret_post")):
        """A client for the authorization code, device and refresh grants; `secret` None is a
        public client. A confidential one authenticates only as `methods` (its
        `token_endpoint_auth_method`: without one, Glewlwyd refuses every authentication), and may
        revoke its tokens (`client_credentials`)."""
        types = ["code", "device_authorization", "refresh_token"]
        body = {"client_id": client_id, "name": client_id, "enabled": True, "confidential": secret is not None,
                "redirect_uri": list(redirect_uris), "authorization_type": types, "scope": []}
        if secret is not None:
            body["client_secret"] = secret
            body["token_endpoint_auth_method"] = list(methods)
            types.append("client_credentials")
        self.api("POST", "/api/client/", body)

    # --- the user's side

    def grant(self, client_id, scope="openid"):
        status, _, text = self.request("PUT", "/api/auth/grant/" + client_id, {"scope": scope},
                                       cookie=self.user_cookie)
        assert status == 200, (status, text)

    def approve_device(self, plugin, user_code, client_id, scope="openid"):
        """Consent, then enter the user code, as a signed-in user would."""
        self.grant(client_id, scope)
        path = "/api/%s/device?%s" % (plugin, urllib.parse.urlencode({"code": user_code}) + "&g_continue")
        status, headers, _ = self.request("GET", path, cookie=self.user_cookie)
        assert status == 302 and "deviceComplete" in headers.get("location", ""), (status, headers)

    def authorize(self, url, client_id, scope="openid"):
        """The browser's part: consent, open the authorization URL signed in, return the Location
        it redirects to (the loopback redirect with code, state and iss)."""
        self.grant(client_id, scope)
        parts = urllib.parse.urlsplit(url)
        status, headers, text = self.request("GET", parts.path + "?" + parts.query + "&g_continue",
                                             cookie=self.user_cookie)
        assert status == 302, (status, headers, text[:300])
        return headers["location"]

    def introspect(self, plugin, token, client_id, secret):
        """RFC 7662 at the plugin, authenticated as the client: the `active` flag."""
        import base64
        auth = base64.b64encode(("%s:%s" % (client_id, secret)).encode()).decode()
        status, _, text = self.request("POST", "/api/%s/introspect" % plugin, form={"token": token},
                                       headers={"Authorization": "Basic " + auth})
        assert status == 200, (status, text)
        return json.loads(text).get("active")
