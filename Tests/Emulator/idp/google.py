"""Google OAuth 2.0 (desktop + limited-input device), under /google (protocols.md §3, §6).

POST /google/token, POST /google/device/code, POST /google/revoke (RFC 7009),
GET|POST /google/o/oauth2/v2/auth, GET /google/tokeninfo, GET /google/v1/userinfo,
GET /google/.well-known/openid-configuration, GET /google/oauth2/v3/certs; and Cloud Resource
Manager's projects.get, GET /google/resourcemanager/v1/projects/ID (for exec's project number).

How it differs from Azure, on purpose: client_secret required at the token endpoint (form or
HTTP Basic); refresh responses carry no refresh_token (no rotation); a refresh token only
for access_type=offline on a user's first consent or with prompt=consent; device answers
say `verification_url`; errors are plain {"error", "error_description"}.
"""

import base64
import functools
import hashlib
import secrets
from typing import NamedTuple

from . import browser, tokens
from .store import GrantError
from .web import NO_STORE, Route, json_response

DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


class Refusal(NamedTuple):
    error: str
    description: str
    status: int = 400
    extra: dict = {}


_DEAD = Refusal("invalid_grant", "Token has been expired or revoked.")

# Keyed by store GrantError reasons and device-code answer names. HTTP statuses of the device
# poll errors are from third-party reports [?] (see README).
REFUSALS = {
    "unknown": _DEAD, "revoked": _DEAD, "expired": _DEAD, "reused": _DEAD,
    "consent_required": _DEAD,
    "client_mismatch": Refusal("unauthorized_client", "Unauthorized", 401),
    "mfa_required": Refusal("invalid_grant", "reauth related error (invalid_rapt)", 400,
                            {"error_subtype": "invalid_rapt",
                             "error_uri": "https://support.google.com/a/answer/9368756"}),
    "bad_code": Refusal("invalid_grant", "Malformed auth code."),
    "code_redeemed": Refusal("invalid_grant", "Bad Request"),
    "code_expired": Refusal("invalid_grant", "Bad Request"),
    "redirect_mismatch": Refusal("redirect_uri_mismatch", "Bad Request"),
    "pkce_mismatch": Refusal("invalid_grant", "Bad Request"),
    "authorization_pending": Refusal("authorization_pending", "Precondition Required", 428),
    "slow_down": Refusal("slow_down", "Forbidden", 403),
    "authorization_declined": Refusal("access_denied", "Forbidden", 403),
    "access_denied": Refusal("access_denied", "Forbidden", 403),
    "expired_token": Refusal("expired_token", "Bad Request"),
    "bad_verification_code": Refusal("invalid_grant", "Malformed auth code."),
    "invalid_grant": Refusal("invalid_grant", "Bad Request"),
}


class GoogleError(Exception):
    def __init__(self, refusal):
        super().__init__(refusal.error)
        self.refusal = refusal


def _error(refusal, status=None, extra=None):
    body = {"error": refusal.error, "error_description": refusal.description,
            **refusal.extra, **(extra or {})}
    return json_response(body, status or refusal.status, NO_STORE)


def _guarded(handler):
    """Turn GoogleError and GrantError into Google error responses."""
    @functools.wraps(handler)
    def wrapper(self, req, **params):
        try:
            return handler(self, req, **params)
        except GoogleError as e:
            return _error(e.refusal)
        except GrantError as e:
            return _error(REFUSALS[e.reason])
    return wrapper


def _required(fields, name):
    if not fields.get(name):
        raise GoogleError(Refusal("invalid_request", f"Missing required parameter: {name}"))
    return fields[name]


def _client(req):
    """(client_id, client_secret) from the form or HTTP Basic; both are required."""
    form = req.form
    client_id, secret = form.get("client_id"), form.get("client_secret")
    auth = req.headers.get("authorization", "")
    if auth.lower().startswith("basic "):
        try:
            client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
        except ValueError:
            raise GoogleError(Refusal("invalid_client", "Unauthorized", 401)) from None
    if not client_id:
        raise GoogleError(Refusal("invalid_request", "Could not determine client ID from request."))
    if not secret:
        raise GoogleError(Refusal("invalid_request", "client_secret is missing."))
    return client_id


def _api_error(status, message, code):
    """A Google API error document (AIP-193)."""
    return json_response({"error": {"code": status, "message": message, "status": code}}, status)


def _user_code():
    """Google style: `ABCD-EFGH`."""
    code = tokens.user_code()[:8]
    return f"{code[:4]}-{code[4:]}"


def _sub(user):
    """Google subjects are long decimal strings, stable per user."""
    return str(int(hashlib.sha256(user.oid.encode()).hexdigest(), 16))[:21]


class GoogleProvider:
    """The Google handlers, over the shared GrantStore and Options."""

    def __init__(self, store, options):
        self.store = store
        self.options = options

    def routes(self):
        return [
            Route(("POST",), r"/google/token", "google.token", self.token),
            Route(("POST",), r"/google/device/code", "google.devicecode", self.device_code),
            Route(("POST",), r"/google/revoke", "google.revoke", self.revoke),
            Route(("GET", "POST"), r"/google/o/oauth2/v2/auth", "google.authorize", self.authorize),
            Route(("GET",), r"/google/tokeninfo", "google.tokeninfo", self.tokeninfo),
            Route(("GET",), r"/google/v1/userinfo", "google.userinfo", self.userinfo),
            Route(("GET",), r"/google/\.well-known/openid-configuration",
                  "google.openid-configuration", self.openid_configuration),
            Route(("GET",), r"/google/oauth2/v3/certs", "google.jwks",
                  lambda req: json_response({"keys": []})),
            Route(("GET",), r"/google/resourcemanager/v1/projects/(?P<project>[^/]+)",
                  "google.resourcemanager", self.project),
        ]

    # -- device authorization ------------------------------------------------------------

    @_guarded
    def device_code(self, req):
        form = req.form
        client_id = _required(form, "client_id")
        scopes = tokens.split_scopes(_required(form, "scope"))
        dc = self.store.create_device_code(client_id, scopes, "google", _user_code())
        return json_response({
            "device_code": dc.device_code, "user_code": dc.user_code,
            "expires_in": dc.expires_in, "interval": dc.interval,
            "verification_url": self.options.verification_uri or f"{req.base_url}/devicelogin"})

    # -- token endpoint ------------------------------------------------------------------

    @_guarded
    def token(self, req):
        client_id = _client(req)
        grant_type = _required(req.form, "grant_type")
        grant = {DEVICE_CODE_GRANT: self._device_code_grant,
                 "refresh_token": self._refresh_token_grant,
                 "authorization_code": self._authorization_code_grant}.get(grant_type)
        if grant is None:
            raise GoogleError(Refusal("unsupported_grant_type", f"Invalid grant_type: {grant_type}"))
        return grant(req, client_id)

    def _device_code_grant(self, req, client_id):
        dc, answer = self.store.poll_device_code(_required(req.form, "device_code"), client_id)
        if answer != "success":
            spec = dict(answer) if isinstance(answer, dict) else {"error": answer}
            name, status = spec.pop("error"), spec.pop("status", None)
            return _error(REFUSALS.get(name) or Refusal(name, f"Scripted error {name}."), status, spec)
        user = self.store.user(dc.username)
        rt = self.store.add_refresh_token(user.username, client_id, dc.scopes)
        return self._tokens(req, user, client_id, dc.scopes, rt.family, rt.token, grant=rt)

    def _refresh_token_grant(self, req, client_id):
        grant, _, user = self.store.redeem_refresh_token(_required(req.form, "refresh_token"),
                                                         client_id, rotate=False)
        scopes = tokens.split_scopes(req.form.get("scope")) or grant.scopes
        return self._tokens(req, user, client_id, scopes, grant.family, grant=grant)

    def _authorization_code_grant(self, req, client_id):
        form = req.form
        ac = self.store.redeem_auth_code(_required(form, "code"), client_id,
                                         _required(form, "redirect_uri"), form.get("code_verifier"))
        user = self.store.user(ac.username)
        if not ac.grants_refresh_token:
            return self._tokens(req, user, client_id, ac.scopes, nonce=ac.nonce)
        rt = self.store.add_refresh_token(user.username, client_id, ac.scopes)
        return self._tokens(req, user, client_id, ac.scopes, rt.family, rt.token, ac.nonce, grant=rt)

    def _tokens(self, req, user, client_id, scopes, family=None, refresh_token=None, nonce=None, grant=None):
        """`grant`: the refresh token the reply's access token comes from, whose remaining
        lifetime Google states (`refresh_token_expires_in`) with `announce_refresh_token_lifetime`."""
        at = self.store.issue_access_token(user, client_id, scopes, user.tid, family)
        body = {"access_token": at.token, "expires_in": int(self.options.access_token_lifetime),
                "scope": " ".join(scopes), "token_type": "Bearer"}
        if refresh_token is not None:
            body["refresh_token"] = refresh_token
        left = self.store.seconds_left(grant) if grant is not None else None
        if self.options.announce_refresh_token_lifetime and left is not None:
            body["refresh_token_expires_in"] = left
        if "openid" in scopes:
            now = self.options.wall_time()
            iss = f"{req.base_url}/google"
            if self.options.google_iss_without_scheme:
                iss = iss.split("://", 1)[1]
            claims = {"iss": iss, "azp": client_id, "aud": client_id,
                      "sub": _sub(user), "email": user.username, "email_verified": True,
                      "name": user.name, "at_hash": secrets.token_urlsafe(16), "iat": now,
                      "exp": now + int(self.options.id_token_lifetime)}
            if nonce:
                claims["nonce"] = nonce
            body["id_token"] = tokens.id_token(claims)
        return json_response(body, 200, NO_STORE)

    # -- revocation and token information ------------------------------------------------

    def revoke(self, req):
        """RFC 7009 as Google answers it: 200 `{}` when revoked, 400 for an unknown token."""
        token = req.query.get("token") or req.form.get("token")
        if not token:
            return _error(Refusal("invalid_request", "Missing required parameter: token"))
        if self.store.revoke_grant(token) == 0:
            return _error(Refusal("invalid_token", "Token expired or revoked"))
        return json_response({})

    def tokeninfo(self, req):
        token = req.query.get("access_token")
        info = self.store.validate_access_token(token or "")
        if info is None:
            return _error(Refusal("invalid_token", "Invalid Value"))
        user = self.store.user(info["username"])
        return json_response({
            "azp": info["client_id"], "aud": info["client_id"], "sub": _sub(user),
            "scope": info["scope"], "exp": str(info["exp"]),
            "expires_in": str(max(0, info["exp"] - self.options.wall_time())), "email": user.username,
            "email_verified": "true", "access_type": "offline"})

    def userinfo(self, req):
        auth = req.headers.get("authorization", "")
        info = self.store.validate_access_token(auth[7:]) if auth[:7].lower() == "bearer " else None
        if info is None:
            response = _error(Refusal("invalid_request", "Invalid Credentials", 401))
            response.headers["WWW-Authenticate"] = 'Bearer realm="https://accounts.google.com/"'
            return response
        user = self.store.user(info["username"])
        return json_response({"sub": _sub(user), "name": user.name, "email": user.username,
                              "email_verified": True})

    def project(self, req, project):
        """Cloud Resource Manager v1 projects.get: a bearer token with cloud-platform scope;
        `projectNumber` is a string (int64 in Google's JSON); errors in Google's API shape."""
        auth = req.headers.get("authorization", "")
        info = self.store.validate_access_token(auth[7:]) if auth[:7].lower() == "bearer " else None
        if info is None:
            return _api_error(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED")
        known = self.options.google_projects
        if "https://www.googleapis.com/auth/cloud-platform" not in info["scope"].split() or (
                known is not None and project not in known):
            return _api_error(403, "The caller does not have permission", "PERMISSION_DENIED")
        number = known[project] if known is not None else \
            100000000000 + int(hashlib.sha256(project.encode()).hexdigest()[:12], 16) % 900000000000
        return json_response({"projectNumber": str(number), "projectId": project, "name": project,
                              "lifecycleState": "ACTIVE"})

    # -- browser and discovery -----------------------------------------------------------

    def authorize(self, req):
        """Desktop-client auth code + PKCE; any loopback port; offline access on first consent."""
        p = req.params
        client_id, uri = p.get("client_id"), p.get("redirect_uri")
        if not client_id:
            return browser.error_page("Error 400: invalid_request. Missing required parameter: client_id")
        if not browser.redirect_allowed(uri):
            return browser.error_page("Error 400: redirect_uri_mismatch")
        method = p.get("code_challenge_method") or "plain"
        if p.get("response_type") != "code" or not p.get("scope") or method not in ("S256", "plain"):
            return browser.error_page("Error 400: invalid_request")

        def issue_code():
            first = self.store.first_consent(client_id)
            offline = p.get("access_type") == "offline" and (first or "consent" in p.get("prompt", ""))
            return self.store.create_auth_code(
                client_id, uri, tokens.split_scopes(p["scope"]), "google", p.get("code_challenge"),
                method, p.get("nonce"), grants_refresh_token=offline).code
        return browser.consent_step(req, uri, self.options.auto_consent, self.store.user().username,
                                    issue_code, {"error": "access_denied"})

    def openid_configuration(self, req):
        g = f"{req.base_url}/google"
        return json_response({
            "issuer": g,
            "authorization_endpoint": f"{g}/o/oauth2/v2/auth",
            "device_authorization_endpoint": f"{g}/device/code",
            "token_endpoint": f"{g}/token",
            "userinfo_endpoint": f"{g}/v1/userinfo",
            "revocation_endpoint": f"{g}/revoke",
            "jwks_uri": f"{g}/oauth2/v3/certs",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["none"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["plain", "S256"],
            "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_CODE_GRANT],
        })
