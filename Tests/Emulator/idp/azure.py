"""Microsoft identity platform v2.0 (Azure AD / Entra ID), in the shapes Azure answers.

Endpoints (any `{tenant}`: common, organizations, consumers, a GUID or a domain):
POST /{tenant}/oauth2/v2.0/devicecode, POST /{tenant}/oauth2/v2.0/token,
GET|POST /{tenant}/oauth2/v2.0/authorize, GET|POST /{tenant}/oauth2/v2.0/logout,
GET /{tenant}/v2.0/.well-known/openid-configuration, GET /{tenant}/discovery/v2.0/keys,
GET /common/discovery/instance.
"""

import base64
import functools
import time
import uuid
from typing import NamedTuple
from urllib.parse import unquote_plus, urlsplit

from . import browser, tokens
from .store import GrantError
from .web import NO_STORE, Route, html_response, json_response, redirect

DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
SPECIAL_TENANTS = ("common", "organizations", "consumers")


class Refusal(NamedTuple):
    error: str
    code: int | None  # the AADSTS number
    message: str
    extra: dict = {}
    status: int = 400


_REVOKED = Refusal("invalid_grant", 50173,
                   "The provided grant has expired due to it being revoked, a fresh auth token "
                   "is needed. The user might have changed or reset their password.")

# Keyed by store GrantError reasons and by the error names scripted device-code answers use.
# AADSTS numbers marked [?] are plausible, not confirmed (see README).
REFUSALS = {
    "unknown": _REVOKED,
    "revoked": _REVOKED,
    "expired": Refusal("invalid_grant", 700082, "The refresh token has expired due to inactivity."),
    "reused": Refusal("invalid_grant", 70000,  # [?] Azure itself accepts reuse (option "accept")
                      "Provided grant is invalid or malformed. The refresh token was already redeemed."),
    "client_mismatch": Refusal("invalid_grant", 70000, "Provided grant is invalid or malformed."),
    "mfa_required": Refusal(
        "interaction_required", 50076,
        "Due to a configuration change made by your administrator, or because you moved to a new "
        "location, you must use multi-factor authentication to access "
        "'00000003-0000-0000-c000-000000000000'.",
        {"suberror": "basic_action",
         "claims": '{"access_token":{"capolids":{"essential":true,"values":["emulator-mfa-policy"]}}}'}),
    "consent_required": Refusal(
        "invalid_grant", 65001,
        "The user or administrator has not consented to use the application. Send an interactive "
        "authorization request for this user and resource.", {"suberror": "consent_required"}),
    "bad_code": Refusal("invalid_grant", 70000, "The provided value for the 'code' parameter is not valid."),
    "code_redeemed": Refusal("invalid_grant", 54005,
                             "OAuth2 Authorization code was already redeemed, please retry with a "
                             "new valid code or use an existing refresh token."),
    "code_expired": Refusal("invalid_grant", 70008,
                            "The provided authorization code or refresh token has expired due to "
                            "inactivity. Send a new interactive authorization request for this user "
                            "and resource."),
    "redirect_mismatch": Refusal("invalid_grant", 500112,  # [?]
                                 "The reply address does not match the reply address provided when "
                                 "requesting Authorization code."),
    "pkce_mismatch": Refusal("invalid_grant", 501481, "The Code_Verifier does not match the "
                             "code_challenge supplied in the authorization request."),
    "authorization_pending": Refusal("authorization_pending", 70016, "OAuth 2.0 device flow error. "
                                     "Authorization is pending. Continue polling."),
    "slow_down": Refusal("slow_down", None, "Polling too often; add 5 seconds to the interval."),
    "authorization_declined": Refusal("authorization_declined", 65004,  # [?]
                                      "User declined to consent to access the app."),
    "expired_token": Refusal("expired_token", 70020, "The provided value for the input parameter "
                             "'device_code' is not valid. This device code has expired."),
    "bad_verification_code": Refusal("bad_verification_code", 70000,  # [?]
                                     "The provided value for the input parameter 'device_code' "
                                     "is not valid."),
    "invalid_grant": Refusal("invalid_grant", 70000, "Provided grant is invalid or malformed."),
}


class AzureError(Exception):
    """Raised by a handler to answer with an Azure error body."""

    def __init__(self, refusal):
        super().__init__(refusal.error)
        self.refusal = refusal


def _required(fields, name):
    value = fields.get(name)
    if not value:
        raise AzureError(Refusal("invalid_request", 900144,
                                 f"The request body must contain the following parameter: '{name}'."))
    return value


def _scopes(fields):
    """The `scope` field, checked as Azure does: required, `.default` not mixed with others."""
    scopes = tokens.split_scopes(_required(fields, "scope"))
    resource = tokens.resource_scopes(scopes)
    if any(s.endswith("/.default") for s in resource) and len(resource) > 1:
        raise AzureError(Refusal("invalid_scope", 70011,
                                 f"The provided value for the input parameter 'scope' is not valid. "
                                 f"The scope '{' '.join(scopes)}' is not valid: a .default scope "
                                 f"can't be combined with other resource scopes."))
    return scopes


def _guarded(handler):
    """Turn AzureError and GrantError raised by an endpoint into Azure error responses."""
    @functools.wraps(handler)
    def wrapper(self, req, **params):
        try:
            return handler(self, req, **params)
        except AzureError as e:
            return self.error(req, e.refusal)
        except GrantError as e:
            return self.error(req, REFUSALS[e.reason])
    return wrapper


class AzureProvider:
    """The Azure AD v2.0 handlers, over a GrantStore and the emulator Options."""

    def __init__(self, store, options):
        self.store = store
        self.options = options

    def routes(self):
        tenant = r"/(?P<tenant>[^/]+)"
        return [
            Route(("POST",), tenant + r"/oauth2/v2\.0/devicecode", "devicecode", self.devicecode),
            Route(("POST",), tenant + r"/oauth2/v2\.0/token", "token", self.token),
            Route(("GET", "POST"), tenant + r"/oauth2/v2\.0/authorize", "authorize", self.authorize),
            Route(("GET", "POST"), tenant + r"/oauth2/v2\.0/logout", "logout", self.logout),
            Route(("GET",), tenant + r"/v2\.0/\.well-known/openid-configuration",
                  "openid-configuration", self.openid_configuration),
            Route(("GET",), tenant + r"/discovery/v2\.0/keys", "jwks", self.jwks),
            Route(("GET",), r"/common/discovery/instance", "instance-discovery",
                  self.instance_discovery),
        ]

    # -- error bodies --------------------------------------------------------------------

    def error(self, req, refusal, status=None, extra=None):
        """An Azure error body: AADSTS code, trace and correlation IDs, timestamp, error_uri."""
        trace = str(uuid.uuid4())
        correlation = req.headers.get("client-request-id") or str(uuid.uuid4())
        stamp = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())
        prefix = f"AADSTS{refusal.code}: " if refusal.code else ""
        body = {"error": refusal.error,
                "error_description": f"{prefix}{refusal.message}\r\nTrace ID: {trace}\r\n"
                                     f"Correlation ID: {correlation}\r\nTimestamp: {stamp}"}
        if refusal.code:
            body["error_codes"] = [refusal.code]
        body.update(timestamp=stamp, trace_id=trace, correlation_id=correlation)
        if refusal.code:
            body["error_uri"] = f"{req.base_url}/error?code={refusal.code}"
        body.update(refusal.extra)
        body.update(extra or {})
        return json_response(body, status or refusal.status, NO_STORE)

    def _scripted(self, req, answer):
        """A scripted device-code answer: an error name, or a dict with error/status/extra fields."""
        spec = dict(answer) if isinstance(answer, dict) else {"error": answer}
        name = spec.pop("error")
        status = spec.pop("status", None)
        refusal = REFUSALS.get(name) or Refusal(name, None, f"Scripted error {name}.")
        return self.error(req, refusal, status, spec)

    # -- tenants -------------------------------------------------------------------------

    def _endpoint_tenant(self, tenant):
        """What discovery puts in endpoint URLs: aliases and GUIDs as given, domains → tenant GUID."""
        if tenant.lower() in SPECIAL_TENANTS or tokens.is_guid(tenant):
            return tenant
        return self.options.tenant_id

    @staticmethod
    def _token_tid(tenant, user):
        """The `tid` of issued tokens: the tenant GUID asked for, else the user's home tenant."""
        return tenant.lower() if tokens.is_guid(tenant) else user.tid

    # -- device authorization ------------------------------------------------------------

    @_guarded
    def devicecode(self, req, tenant):
        form = req.form
        self._refuse_authenticated_public_device_client(req)
        client_id = self._client(req)
        dc = self.store.create_device_code(client_id, _scopes(form), tenant)
        uri = self.options.verification_uri or f"{req.base_url}/devicelogin"
        return json_response({
            "user_code": dc.user_code, "device_code": dc.device_code, "verification_uri": uri,
            "expires_in": dc.expires_in, "interval": dc.interval,
            "message": f"To sign in, use a web browser to open the page {uri} and enter the "
                       f"code {dc.user_code} to authenticate."}, 200, NO_STORE)

    def _refuse_authenticated_public_device_client(self, req):
        """A `public_device_clients` entry presenting a secret: 403 unauthorized_client (Auth0)."""
        auth = req.headers.get("authorization", "")
        client_id = req.form.get("client_id")
        if auth[:6].lower() == "basic ":
            try:
                client_id = unquote_plus(base64.b64decode(auth[6:].strip()).decode().partition(":")[0])
            except ValueError:
                pass
        if client_id in (self.options.public_device_clients or ()) and (
                auth[:6].lower() == "basic " or req.form.get("client_secret")):
            raise AzureError(Refusal("unauthorized_client", None, "Unauthorized", status=403))

    # -- token endpoint ------------------------------------------------------------------

    def _client(self, req):
        """The client of a token or device request and the secret it presented (HTTP Basic, RFC 6749
        §2.3.1, or `client_secret` in the body), checked against `confidential_clients`: a
        listed client must present its secret (else 401 AADSTS7000215), any other is public and
        must present none (else 401 AADSTS700025)."""
        form = req.form
        client_id, secret = form.get("client_id"), form.get("client_secret")
        auth = req.headers.get("authorization", "")
        if auth[:6].lower() == "basic ":
            try:
                pair = base64.b64decode(auth[6:].strip(), validate=True).decode()
                basic_id, _, basic_secret = pair.partition(":")
                basic_id, basic_secret = unquote_plus(basic_id), unquote_plus(basic_secret)
            except ValueError:
                raise AzureError(Refusal("invalid_client", 7000215, "Invalid client secret provided.",
                                         status=401))
            client_id, secret = client_id or basic_id, basic_secret
        if not client_id:
            client_id = _required(form, "client_id")
        registered = (self.options.confidential_clients or {}).get(client_id)
        if registered is not None:
            if secret != registered:
                raise AzureError(Refusal("invalid_client", 7000215,
                                         "Invalid client secret provided. Ensure the secret being sent "
                                         f"in the request is the client secret value for app '{client_id}'.",
                                         status=401))
        elif secret or form.get("client_assertion"):
            raise AzureError(Refusal("invalid_client", 700025, "Client is public so neither "
                                     "'client_assertion' nor 'client_secret' should be presented.",
                                     status=401))
        return client_id

    @_guarded
    def token(self, req, tenant):
        form = req.form
        client_id = self._client(req)
        grant_type = _required(form, "grant_type")
        grant = {DEVICE_CODE_GRANT: self._device_code_grant,
                 "refresh_token": self._refresh_token_grant,
                 "authorization_code": self._authorization_code_grant}.get(grant_type)
        if grant is None:
            raise AzureError(Refusal("unsupported_grant_type", 70003,
                                     f"The app requested an unsupported grant type '{grant_type}'."))
        return grant(req, tenant, client_id)

    def _device_code_grant(self, req, tenant, client_id):
        dc, answer = self.store.poll_device_code(_required(req.form, "device_code"), client_id)
        if answer != "success":
            return self._scripted(req, answer)
        return self._signed_in(req, tenant, self.store.user(dc.username), client_id, dc.scopes)

    def _refresh_token_grant(self, req, tenant, client_id):
        form = req.form
        presented = _required(form, "refresh_token")
        scopes = _scopes(form)
        offline = "offline_access" in scopes
        mode = self.options.refresh_token_mode
        grant, new, user = self.store.redeem_refresh_token(presented, client_id,
                                                           rotate=offline and mode == "rotate",
                                                           scopes=scopes)
        reply = None
        if offline:
            reply = {"rotate": new and new.token, "same": presented, "omit": None, "empty": ""}[mode]
        return self._tokens(req, tenant, user, client_id, scopes, grant.family, reply)

    def _authorization_code_grant(self, req, tenant, client_id):
        form = req.form
        ac = self.store.redeem_auth_code(_required(form, "code"), client_id,
                                         _required(form, "redirect_uri"), form.get("code_verifier"))
        scopes = tokens.split_scopes(form.get("scope")) or ac.scopes
        user = self.store.user(ac.username)
        if not ac.grants_refresh_token:
            return self._tokens(req, tenant, user, client_id, scopes, nonce=ac.nonce)
        rt = self.store.add_refresh_token(user.username, client_id, ac.scopes)
        return self._tokens(req, tenant, user, client_id, scopes, rt.family, rt.token, ac.nonce)

    def _signed_in(self, req, tenant, user, client_id, scopes):
        """Tokens for a new sign-in; a refresh token only when `offline_access` was asked for."""
        if "offline_access" not in scopes:
            return self._tokens(req, tenant, user, client_id, scopes)
        rt = self.store.add_refresh_token(user.username, client_id, scopes)
        return self._tokens(req, tenant, user, client_id, scopes, rt.family, rt.token)

    def _tokens(self, req, tenant, user, client_id, scopes, family=None, refresh_token=None,
                nonce=None):
        """The success body: Bearer access token, then refresh_token, id_token, client_info as due.

        `family` links the access token to its grant; `refresh_token` is the reply's value
        (None: no field).
        """
        tid = self._token_tid(tenant, user)
        at = self.store.issue_access_token(user, client_id, scopes, tid, family,
                                           jwt=self.options.azure_jwt_access_tokens)
        lifetime = int(self.options.access_token_lifetime)
        body = {"token_type": "Bearer", "scope": " ".join(s for s in scopes if s != "offline_access"),
                "expires_in": lifetime, "ext_expires_in": lifetime, "access_token": at.token}
        if refresh_token is not None:
            body["refresh_token"] = refresh_token
        if "openid" in scopes:
            now = self.options.wall_time()
            claims = {"aud": client_id, "iss": f"{req.base_url}/{tid}/v2.0", "iat": now,
                      "nbf": now, "exp": now + int(self.options.id_token_lifetime), "name": user.name,
                      "oid": user.oid, "preferred_username": user.username,
                      "sub": tokens.pairwise_sub(user.oid, client_id), "tid": tid, "ver": "2.0"}
            if nonce:
                claims["nonce"] = nonce
            body["id_token"] = tokens.id_token(claims)
        if req.form.get("client_info") == "1":  # Azure sends it only when asked, as MSAL does
            body["client_info"] = tokens.client_info(user.oid, user.tid)
        return json_response(body, 200, NO_STORE)

    # -- browser endpoints ---------------------------------------------------------------

    def authorize(self, req, tenant):
        """Auth code + PKCE: consent page, or (auto_consent) an immediate redirect with a code."""
        p = req.params
        client_id, uri = p.get("client_id"), p.get("redirect_uri")
        if not client_id:
            return browser.error_page("AADSTS900144: The request body must contain the following "
                                      "parameter: 'client_id'.")
        if not browser.redirect_allowed(uri, ("localhost", "127.0.0.1")):
            return browser.error_page(f"AADSTS50011: The redirect URI '{uri}' specified in the "
                                      f"request does not match the redirect URIs configured for "
                                      f"the application '{client_id}'.")
        method = p.get("code_challenge_method") or "plain"
        problem = ("unsupported_response_type" if p.get("response_type") != "code" else
                   "invalid_request" if not p.get("scope") or method not in ("S256", "plain") else
                   None)
        if problem:
            return browser.send_to(uri, p.get("response_mode"), {
                "error": problem, "state": p.get("state"), "error_description": f"Emulator: {problem}."})

        def issue_code():
            scopes = tokens.split_scopes(p["scope"])
            return self.store.create_auth_code(
                client_id, uri, scopes, tenant, p.get("code_challenge"), method, p.get("nonce"),
                grants_refresh_token="offline_access" in scopes).code
        return browser.consent_step(req, uri, self.options.auto_consent, self.store.user().username,
                                    issue_code, {"error": "access_denied", "error_description":
                                                 "AADSTS65004: User declined to consent to access the app."})

    def logout(self, req, tenant):
        target = req.params.get("post_logout_redirect_uri")
        if target:
            return redirect(target)
        return html_response("<!doctype html><title>Signed out</title><p>You signed out of your account.")

    # -- discovery -----------------------------------------------------------------------

    def openid_configuration(self, req, tenant):
        base, t = req.base_url, self._endpoint_tenant(tenant)
        issuer_tenant = "{tenantid}" if t.lower() in SPECIAL_TENANTS else t
        return json_response({
            "token_endpoint": f"{base}/{t}/oauth2/v2.0/token",
            "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt",
                                                      "client_secret_basic"],
            "jwks_uri": f"{base}/{t}/discovery/v2.0/keys",
            "response_modes_supported": ["query", "fragment", "form_post"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["none"],
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "issuer": f"{base}/{issuer_tenant}/v2.0",
            "request_uri_parameter_supported": False,
            "authorization_endpoint": f"{base}/{t}/oauth2/v2.0/authorize",
            "device_authorization_endpoint": f"{base}/{t}/oauth2/v2.0/devicecode",
            "http_logout_supported": True,
            "frontchannel_logout_supported": True,
            "end_session_endpoint": f"{base}/{t}/oauth2/v2.0/logout",
            "claims_supported": ["sub", "iss", "aud", "exp", "iat", "nbf", "name", "nonce", "oid",
                                 "preferred_username", "tid", "ver"],
            "tenant_region_scope": None,
            "cloud_instance_name": "microsoftonline.com",
            "cloud_graph_host_name": "graph.windows.net",
            "msgraph_host": "graph.microsoft.com",
        })

    def jwks(self, req, tenant):
        """ID tokens are unsigned (`alg: none`), so there is no key to publish."""
        return json_response({"keys": []})

    def instance_discovery(self, req):
        """What MSAL asks when instance discovery is on: this host is its only alias."""
        endpoint = urlsplit(req.query.get("authorization_endpoint", ""))
        tenant = (endpoint.path.split("/") + ["", "common"])[1] or "common"
        host = urlsplit(req.base_url).netloc
        return json_response({
            "tenant_discovery_endpoint": f"{req.base_url}/{tenant}/v2.0/.well-known/openid-configuration",
            "api-version": "1.1",
            "metadata": [{"preferred_network": host, "preferred_cache": host, "aliases": [host]}]})
