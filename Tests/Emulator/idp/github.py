"""GitHub's OAuth endpoints as GitHub documents them, for `provider = github` (github.com and
GitHub Enterprise Server share them; the emulator's origin is the authority):

    POST /login/device/code          device flow step 1
    GET|POST /login/oauth/authorize  web application flow step 1 (code + PKCE S256)
    POST /login/oauth/access_token   device_code, authorization_code and refresh_token grants
    GET  /api/v3/user                the REST API's authenticated user (GHES's API base; a
                                     github.com-like test sets api-endpoint to {base}/api/v3)

Sources (GitHub Docs; each behaviour below names its page):
- [OAUTH] "Authorizing OAuth apps" (docs.github.com/en/apps/oauth-apps/building-oauth-apps/
  authorizing-oauth-apps): the endpoints and parameters; replies form-encoded by default, JSON
  with `Accept: application/json`; the device code reply (`device_code`, `user_code`,
  `verification_uri` https://github.com/login/device, `expires_in` 900, `interval` 5); a second
  poll within the interval is `slow_down`, which adds 5 s and names the new `interval`; the
  device flow's error codes `authorization_pending`, `slow_down`, `expired_token`,
  `unsupported_grant_type`, `incorrect_client_credentials`, `incorrect_device_code`,
  `access_denied`, `device_flow_disabled`; the token reply's `scope` comma-separated
  (`scope=repo%2Cgist`) and `token_type=bearer`.
- [TROUBLE] "Troubleshooting OAuth app access token request errors": errors of the token endpoint
  come in the body with HTTP 200 (`incorrect_client_credentials`, `redirect_uri_mismatch`,
  `bad_verification_code`).
- [REFRESH] "Refreshing user access tokens": with expiring user tokens (a GitHub App's default)
  the reply adds `expires_in` 28800, `refresh_token` and `refresh_token_expires_in` 15897600; a
  refresh needs `client_secret` unless the token came from the device flow; once a refresh token
  is used, it and the old access token no longer work; `bad_refresh_token` for one that is
  incorrect or expired. Without expiring tokens the reply has neither `expires_in` nor
  `refresh_token` (a token that lasts until revoked).
- [FORMATS] "About authentication to GitHub", GitHub's token formats: `gho_` OAuth access tokens,
  `ghu_` user access tokens of GitHub Apps, `ghr_` refresh tokens.
- [USER] REST API "Get the authenticated user": `GET /user` with `Authorization: Bearer TOKEN`
  answers `login` and `id`; a bad token 401 `{"message": "Bad credentials"}`.

Not stated by GitHub's docs, chosen here: the HTTP status of `device_flow_disabled` on the device
request (400, as interface.md §2.2 has it; the other device request errors the same way); the
reply of an unknown path (404 JSON).
"""

from urllib.parse import urlencode

from . import browser, tokens
from .google import DEVICE_CODE_GRANT
from .store import GrantError
from .web import NO_STORE, Response, Route, json_response

FORM_TYPE = "application/x-www-form-urlencoded; charset=utf-8"
ACCESS_TOKEN_LIFETIME = 28800          # [REFRESH] always 28800 when tokens expire
REFRESH_TOKEN_LIFETIME = 15897600      # [REFRESH] about six months
SLOW_DOWN_STEP = 5                     # [OAUTH] seconds slow_down adds


def _reply(req, fields, status=200):
    """[OAUTH] JSON when the request's Accept names application/json, else form-encoded."""
    if "application/json" in req.headers.get("accept", ""):
        return json_response(fields, status, NO_STORE)
    body = urlencode({k: str(v) for k, v in fields.items()}).encode()
    return Response(status, body, FORM_TYPE, dict(NO_STORE))


def _error(req, error, description, status=200, **extra):
    """[TROUBLE] token endpoint errors come with HTTP 200; `error_uri` as GitHub adds one."""
    return _reply(req, {"error": error, "error_description": description,
                        "error_uri": "https://docs.github.com/apps/oauth", **extra}, status)


class GitHub:
    """GitHub's handlers over the shared GrantStore. `configure(...)` sets what the app does."""

    def __init__(self, store, options):
        self.store = store
        self.options = options
        self.reset()

    def reset(self):
        self.expiring = True
        self.device_flow = True
        self.secrets = {}
        self.access_token_lifetime = ACCESS_TOKEN_LIFETIME
        self.intervals = {}   # device_code -> current interval (slow_down raises it)
        self.last_poll = {}   # device_code -> store.now() of the last poll
        self.device_families = set()  # grants signed in through the device flow

    def configure(self, expiring=None, device_flow=None, secrets=None, access_token_lifetime=None):
        """`expiring`: the app uses expiring user tokens (GitHub Apps' default) or not (an OAuth
        app: tokens without expiry and no refresh token); `device_flow`: the app has the device
        flow enabled; `secrets`: {client_id: secret} of apps whose secret the code and refresh
        grants check; `access_token_lifetime`: seconds an expiring access token lasts (GitHub's
        28800; shorter for tests). Returns self."""
        with self.store.lock:
            if access_token_lifetime is not None:
                self.access_token_lifetime = int(access_token_lifetime)
            if expiring is not None:
                self.expiring = expiring
            if device_flow is not None:
                self.device_flow = device_flow
            if secrets is not None:
                self.secrets = dict(secrets)
        return self

    def routes(self):
        return [
            Route(("POST",), r"/login/device/code", "github.devicecode", self.device_code),
            Route(("GET", "POST"), r"/login/oauth/authorize", "github.authorize", self.authorize),
            Route(("POST",), r"/login/oauth/access_token", "github.token", self.token),
            Route(("GET",), r"/api/v3/user", "github.user", self.user),
            Route(("GET", "POST"), r"/login/device", "github.devicelogin",
                  lambda req: browser.device_login(self.store, req)),
        ]

    # -- device flow -----------------------------------------------------------------------

    def device_code(self, req):
        client_id = req.form.get("client_id")
        if not client_id:
            return _error(req, "incorrect_client_credentials", "The client_id passed is incorrect.", 400)
        if not self.device_flow:
            return _error(req, "device_flow_disabled", "Device flow has not been enabled for this app.", 400)
        code = tokens.user_code()  # [OAUTH] eight characters with a hyphen: WDJB-MJHT
        dc = self.store.create_device_code(client_id, _scopes(req.form.get("scope")), "github", code[:4] + "-" + code[4:8])
        with self.store.lock:
            self.intervals[dc.device_code] = dc.interval
        return _reply(req, {"device_code": dc.device_code, "user_code": dc.user_code,
                            "verification_uri": req.base_url + "/login/device",
                            "expires_in": dc.expires_in, "interval": dc.interval})

    def _poll(self, req, client_id):
        code = req.form.get("device_code", "")
        with self.store.lock:
            now = self.store.now()
            interval = self.intervals.get(code)
            last = self.last_poll.get(code)
            self.last_poll[code] = now
            early = interval is not None and last is not None and now - last < interval
            if early:  # [OAUTH] a poll within the interval: slow_down, 5 s more from now on
                self.intervals[code] = interval + SLOW_DOWN_STEP
        try:
            dc, answer = self.store.poll_device_code(code, client_id)
        except GrantError:
            return _error(req, "incorrect_device_code", "The device_code provided is not valid.")
        if early and answer != "success":
            with self.store.lock:
                dc.polls[-1]["answer"] = "slow_down"
            return _error(req, "slow_down", "Too many requests have been made in the same timeframe.",
                          interval=self.intervals[code])
        if isinstance(answer, dict):
            name = answer["error"]
            extra = {"interval": answer["interval"]} if "interval" in answer else {}
            return _error(req, name, name, answer.get("status", 200), **extra)
        if answer == "success":
            return self._tokens(req, self.store.user(dc.username), client_id, dc.scopes, device=True)
        if answer == "slow_down":
            with self.store.lock:
                self.intervals[code] = self.intervals.get(code, dc.interval) + SLOW_DOWN_STEP
            return _error(req, "slow_down", "Too many requests have been made in the same timeframe.",
                          interval=self.intervals[code])
        name = {"authorization_declined": "access_denied", "invalid_grant": "incorrect_device_code"}.get(answer, answer)
        return _error(req, name, name)

    # -- web application flow --------------------------------------------------------------

    def authorize(self, req):
        p = req.params
        client_id, uri = p.get("client_id"), p.get("redirect_uri")
        if not client_id or not browser.redirect_allowed(uri):
            return browser.error_page("redirect_uri_mismatch: the redirect_uri is not registered")

        def issue_code():
            return self.store.create_auth_code(
                client_id, uri, _scopes(p.get("scope")), "github", p.get("code_challenge"),
                p.get("code_challenge_method") or "plain", None, grants_refresh_token=self.expiring).code
        return browser.consent_step(req, uri, self.options.auto_consent, self.store.user().username,
                                    issue_code, {"error": "access_denied"})

    # -- token endpoint --------------------------------------------------------------------

    def token(self, req):
        form = req.form
        client_id = form.get("client_id")
        if not client_id:
            return _error(req, "incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
        grant = form.get("grant_type")
        if grant == DEVICE_CODE_GRANT:
            return self._poll(req, client_id)
        secret = self.secrets.get(client_id)
        if grant == "refresh_token":
            return self._refresh(req, client_id, secret)
        if grant in (None, "authorization_code") and form.get("code"):
            if secret is not None and form.get("client_secret") != secret:
                return _error(req, "incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
            try:
                ac = self.store.redeem_auth_code(form.get("code", ""), client_id, form.get("redirect_uri"),
                                                 form.get("code_verifier"))
            except GrantError as e:
                if e.reason == "redirect_mismatch":
                    return _error(req, "redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL.")
                return _error(req, "bad_verification_code", "The code passed is incorrect or expired.")
            return self._tokens(req, self.store.user(ac.username), client_id, ac.scopes)
        return _error(req, "unsupported_grant_type", f"grant_type {grant!r} is not supported.")

    def _refresh(self, req, client_id, secret):
        form = req.form
        rt_token = form.get("refresh_token", "")
        with self.store.lock:
            rt = self.store.refresh_tokens.get(rt_token)
            from_device = rt is not None and rt.family in self.device_families
        # [REFRESH] client_secret is required unless the token came from the device flow
        if secret is not None and not from_device and form.get("client_secret") != secret:
            return _error(req, "incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
        try:
            old, new, user = self.store.redeem_refresh_token(rt_token, client_id, rotate=True)
        except GrantError:  # [REFRESH] incorrect, expired, or used once already
            return _error(req, "bad_refresh_token", "The refresh token passed is incorrect or expired.")
        with self.store.lock:
            old.state = "revoked"  # [REFRESH] a used refresh token no longer works
            for at in self.store.access_tokens.values():  # nor the old access token
                if at.family == old.family:
                    at.revoked = True
        return self._tokens(req, user, client_id, old.scopes, new)

    def _tokens(self, req, user, client_id, scopes, rt=None, device=False):
        """[OAUTH]/[REFRESH] the token reply: `scope` comma-separated, `token_type` bearer; with
        expiring tokens also `expires_in`, `refresh_token`, `refresh_token_expires_in`."""
        with self.store.lock:
            if self.expiring:
                if rt is None:
                    rt = self.store.add_refresh_token(user.username, client_id, scopes)
                    if device:
                        self.device_families.add(rt.family)
                if self.options.refresh_token_lifetime is None:
                    rt.expires = self.store.now() + REFRESH_TOKEN_LIFETIME
                at = self.store.issue_access_token(user, client_id, scopes, user.tid, rt.family)
                at.exp = at.iat + self.access_token_lifetime
                prefix, rt_token = "ghu_", rt.token
            else:
                at = self.store.issue_access_token(user, client_id, scopes, user.tid)
                at.exp = at.iat + 10 * 365 * 86400  # no expiry: until revoked
                prefix = "gho_"
            # [FORMATS] GitHub's prefixes on the store's unique tokens
            del self.store.access_tokens[at.token]
            at.token = prefix + at.token.replace("-", "")
            self.store.access_tokens[at.token] = at
            body = {"access_token": at.token, "scope": ",".join(scopes), "token_type": "bearer"}
            if self.expiring:
                if not rt.token.startswith("ghr_"):
                    del self.store.refresh_tokens[rt.token]
                    rt.token = "ghr_" + rt.token.replace("-", "")
                    self.store.refresh_tokens[rt.token] = rt
                body.update({"expires_in": at.exp - at.iat, "refresh_token": rt.token,
                             "refresh_token_expires_in": max(0, round(rt.expires - self.store.now()))})
        return _reply(req, body)

    # -- REST API --------------------------------------------------------------------------

    def user(self, req):
        """[USER] the token's owner; 401 Bad credentials for a token that is not valid."""
        auth = req.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        info = self.store.validate_access_token(token) if scheme.lower() in ("bearer", "token") else None
        if info is None:
            return json_response({"message": "Bad credentials",
                                  "documentation_url": "https://docs.github.com/rest"}, 401)
        with self.store.lock:
            user = self.store.users[info["username"]]
        return json_response({"login": user.username, "id": _numeric_id(user.oid), "type": "User"},
                             200, {"X-OAuth-Scopes": ", ".join(info["scope"].split())})


def _scopes(raw):
    """GitHub's scope lists: space- or comma-separated."""
    return tokens.split_scopes((raw or "").replace(",", " "))


def _numeric_id(oid):
    return int("".join(c for c in oid if c.isdigit())[:9] or "1")
