"""A generic OpenID Provider at a scripted issuer (bug-cases-3.md "FIdP-OIDC"): off until
`Emulator.oidc.configure(path=…)` gives it an issuer path on this server.

With `path = "/application/o/app/"` (Authentik's shape) the issuer is
`{base}/application/o/app/` and it serves, under the path without its terminating `/` (P):

    GET  {P}/.well-known/openid-configuration        discovery (OpenID Connect Discovery §4)
    GET  /.well-known/oauth-authorization-server{P}  RFC 8414 §3; 404 unless `rfc8414` is set
                                                     (and the OpenID one 404 with `oidc_location=False`)
    POST {P}/oidc/device    RFC 8628 device authorization (public or confidential clients)
    POST {P}/oidc/token     device_code, authorization_code (+PKCE), refresh_token grants
    GET  {P}/oidc/authorize code + PKCE, `iss` added to the redirect when `iss_parameter` is set

A path with `//` is answered 404 like any unknown path (and logged). Refreshes follow the shared
Options (`refresh_token_mode`, `refresh_token_reuse`). ID tokens are unsigned JWTs with `iss` =
the issuer (or `id_token_iss`), `aud` = the client, `sub`, `preferred_username`, `exp`, and at
sign-in the request's `nonce`; `script_id_tokens([...])` changes the next replies one by one:
a dict of claims to set (a value None removes the claim), or None for a reply without `id_token`.
"""

import base64
from urllib.parse import quote

from . import browser, tokens
from .google import DEVICE_CODE_GRANT
from .store import GrantError
from .web import NO_STORE, Route, json_response



def _error(error, description, status=400):
    return json_response({"error": error, "error_description": description}, status, NO_STORE)


class GenericOIDC:
    """The generic provider's handlers, over the shared GrantStore and Options."""

    def __init__(self, store, options):
        self.store = store
        self.options = options
        self.reset()

    def reset(self):
        self.path = None
        self.issuer = None
        self.document_issuer = None
        self.id_token_iss = None
        self.iss_parameter = False
        self.response_iss = None
        self.rfc8414 = False
        self.oidc_location = True
        self.id_token_script = []
        self.sign_in_refresh_tokens = True

    def configure(self, path, issuer=None, document_issuer=None, id_token_iss=None,
                  iss_parameter=False, response_iss=None, rfc8414=False, oidc_location=True,
                  sign_in_refresh_tokens=True):
        """Serve an issuer at `path` ("/" for an origin-only issuer). `issuer` (default: base URL +
        path) is what ID tokens name; `document_issuer` what discovery names (default `issuer`);
        `id_token_iss` the ID tokens' `iss` (default `issuer`); `iss_parameter` advertises RFC 9207
        and adds `response_iss` (default `issuer`) to redirects; `rfc8414` serves the RFC 8414
        location too; `oidc_location=False` answers 404 at the OpenID location;
        `sign_in_refresh_tokens=False` answers sign-ins without `refresh_token` (a client not allowed
        offline access: Okta without the Refresh Token grant, Auth0 without "Allow Offline
        Access"; bug-cases-3 X03). Returns self."""
        self.path, self.issuer, self.document_issuer = path, issuer, document_issuer
        self.id_token_iss, self.iss_parameter, self.response_iss = id_token_iss, iss_parameter, response_iss
        self.rfc8414, self.oidc_location = rfc8414, oidc_location
        self.sign_in_refresh_tokens = sign_in_refresh_tokens
        return self

    def script_id_tokens(self, replies):
        """Claims for the next token replies, in order (see the module docstring)."""
        with self.store.lock:
            self.id_token_script = list(replies)

    def routes(self):
        """The routes for the configured path; none while unconfigured (checked per request)."""
        if self.path is None:
            return []
        p = self.path.rstrip("/")
        q = "".join("\\" + c if c in ".^$*+?{}[]|()" else c for c in p)
        return [
            Route(("GET",), q + r"/\.well-known/openid-configuration", "oidc.discovery", self.discovery),
            Route(("GET",), r"/\.well-known/oauth-authorization-server" + q, "oidc.rfc8414", self.rfc8414_document),
            Route(("POST",), q + r"/oidc/device", "oidc.devicecode", self.device),
            Route(("POST",), q + r"/oidc/token", "oidc.token", self.token),
            Route(("GET", "POST"), q + r"/oidc/authorize", "oidc.authorize", self.authorize),
        ]

    def _issuer(self, req):
        return self.issuer or req.base_url + self.path

    def _document(self, req):
        e = req.base_url + self.path.rstrip("/") + "/oidc"
        return {
            "issuer": self.document_issuer or self._issuer(req),
            "authorization_endpoint": e + "/authorize", "token_endpoint": e + "/token",
            "device_authorization_endpoint": e + "/device",
            "response_types_supported": ["code"], "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["none"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_CODE_GRANT],
            "authorization_response_iss_parameter_supported": self.iss_parameter,
        }

    def discovery(self, req):
        if not self.oidc_location:
            return json_response({"error": "not_found", "path": req.path}, 404)
        return json_response(self._document(req))

    def rfc8414_document(self, req):
        if not self.rfc8414:
            return json_response({"error": "not_found", "path": req.path}, 404)
        return json_response(self._document(req))

    # -- device authorization and token endpoint ------------------------------------------

    @staticmethod
    def _client_id(req):
        auth = req.headers.get("authorization", "")
        if auth.lower().startswith("basic "):
            return base64.b64decode(auth[6:]).decode().partition(":")[0]
        return req.form.get("client_id")

    def device(self, req):
        client_id = self._client_id(req)
        if not client_id:
            return _error("invalid_client", "no client_id", 401)
        dc = self.store.create_device_code(client_id, tokens.split_scopes(req.form.get("scope")), "oidc")
        return json_response({
            "device_code": dc.device_code, "user_code": dc.user_code, "expires_in": dc.expires_in,
            "interval": dc.interval, "verification_uri": f"{req.base_url}/devicelogin"})

    def token(self, req):
        client_id = self._client_id(req)
        if not client_id:
            return _error("invalid_client", "no client_id", 401)
        form = req.form
        try:
            if form.get("grant_type") == DEVICE_CODE_GRANT:
                dc, answer = self.store.poll_device_code(form.get("device_code", ""), client_id)
                if answer != "success":
                    name = answer["error"] if isinstance(answer, dict) else answer
                    return _error("access_denied" if name == "authorization_declined" else name, name)
                user = self.store.user(dc.username)
                rt = self.store.add_refresh_token(user.username, client_id, dc.scopes)
                return self._tokens(req, user, client_id, dc.scopes, rt, None)
            if form.get("grant_type") == "authorization_code":
                ac = self.store.redeem_auth_code(form.get("code", ""), client_id, form.get("redirect_uri"),
                                                 form.get("code_verifier"))
                user = self.store.user(ac.username)
                rt = self.store.add_refresh_token(user.username, client_id, ac.scopes)
                return self._tokens(req, user, client_id, ac.scopes, rt, ac.nonce)
            if form.get("grant_type") == "refresh_token":
                mode = self.options.refresh_token_mode
                old, new, user = self.store.redeem_refresh_token(form.get("refresh_token", ""), client_id,
                                                                 rotate=mode == "rotate")
                rt = new if new is not None else old
                scopes = tokens.split_scopes(form.get("scope")) or old.scopes
                return self._tokens(req, user, client_id, scopes, rt, None, refresh=True)
        except GrantError as e:  # Keycloak's words for a refresh token past its time
            return _error("invalid_grant", "Token is not active" if e.reason == "expired" else f"refused: {e.reason}")
        return _error("unsupported_grant_type", f"grant_type {form.get('grant_type')!r}")

    def _tokens(self, req, user, client_id, scopes, rt, nonce, refresh=False):
        at = self.store.issue_access_token(user, client_id, scopes, user.tid, rt.family)
        body = {"access_token": at.token, "token_type": "Bearer",
                "expires_in": int(self.options.access_token_lifetime), "scope": " ".join(scopes)}
        mode = self.options.refresh_token_mode if refresh else "rotate" if self.sign_in_refresh_tokens else "omit"
        if mode in ("rotate", "same"):
            body["refresh_token"] = rt.token
        elif mode == "empty":
            body["refresh_token"] = ""
        if self.options.announce_refresh_token_lifetime:  # Keycloak: 0 when it never expires
            body["refresh_expires_in"] = self.store.seconds_left(rt) or 0
        with self.store.lock:
            script = self.id_token_script.pop(0) if self.id_token_script else {}
        if "openid" in scopes and script is not None:
            now = self.options.wall_time()
            claims = {"iss": self.id_token_iss or self._issuer(req), "aud": client_id,
                      "sub": "sub-" + user.oid, "preferred_username": user.username,
                      "iat": now, "exp": now + int(self.options.id_token_lifetime)}
            if nonce:
                claims["nonce"] = nonce
            for name, value in script.items():
                if value is None:
                    claims.pop(name, None)
                else:
                    claims[name] = value
            body["id_token"] = tokens.id_token(claims)
        return json_response(body, 200, NO_STORE)

    # -- browser --------------------------------------------------------------------------

    def authorize(self, req):
        p = req.params
        client_id, uri = p.get("client_id"), p.get("redirect_uri")
        if not client_id or not browser.redirect_allowed(uri):
            return browser.error_page("invalid_request: client_id or redirect_uri")

        def issue_code():
            return self.store.create_auth_code(
                client_id, uri, tokens.split_scopes(p.get("scope")), "oidc", p.get("code_challenge"),
                p.get("code_challenge_method") or "plain", p.get("nonce"), grants_refresh_token=True).code
        response = browser.consent_step(req, uri, self.options.auto_consent, self.store.user().username,
                                        issue_code, {"error": "access_denied"})
        location = response.headers.get("Location")
        if self.iss_parameter and location and "code=" in location:
            response.headers["Location"] = location + "&iss=" + quote(self.response_iss or self._issuer(req), safe="")
        return response
