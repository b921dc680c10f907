#!/usr/bin/env python3
"""Fidelity check: real client libraries no one here wrote against the running emulator.

MSAL Python against the Azure endpoints (device code, silent refresh, auth code + PKCE, error
bodies), google-auth against the Google token endpoint (refresh, revoked grant).

Usage: check_fidelity.py READY_FILE   (the emulator's ready file; run by check_fidelity.sh)
Needs `msal` and `google-auth` importable and REQUESTS_CA_BUNDLE set to the emulator's CA.
Prints PASS/FAIL per step and exits 1 if any step failed. Where a library and the emulator
disagree, the library is right.
"""

import json
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request
import warnings
from urllib.parse import parse_qsl, quote, urlsplit

import google.auth
import google.auth.exceptions
import msal
from google.auth.transport.requests import Request as GoogleRequest
from google.oauth2.credentials import Credentials

CLIENT_ID = "11111111-2222-3333-4444-555555555555"
TENANT = "organizations"
SCOPES = ["https://graph.microsoft.com/User.Read"]
USERNAME = "fidelity.user@example.test"
GOOGLE_CLIENT_ID = "1234-fidelity.apps.googleusercontent.com"
GOOGLE_SCOPES = ["openid", "email", "https://www.googleapis.com/auth/cloud-platform"]


class Control:
    """The emulator's HTTP control API."""

    def __init__(self, ready):
        self.url = ready["control"]
        self.context = ssl.create_default_context(cafile=ready["ca_file"])

    def call(self, path, body=None):
        """GET without a body, POST with one."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, context=self.context, timeout=10) as response:
            return json.load(response)


    def follow_once(self, url):
        """GET url and return the Location it redirects to (without following it)."""
        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args):
                return None
        opener = urllib.request.build_opener(NoRedirect, urllib.request.HTTPSHandler(context=self.context))
        try:
            opener.open(url, timeout=10)
        except urllib.error.HTTPError as e:
            return e.headers.get("Location", "")
        return ""


class Checker:
    def __init__(self):
        self.failures = 0

    def check(self, step, ok, detail=""):
        print(f"{'PASS' if ok else 'FAIL'}: {step}" + ("" if ok else f" -- {detail}"), flush=True)
        self.failures += not ok
        return ok


def _approve_later(control, user_code, delay):
    """Approve after MSAL has polled at least once, as a user would."""
    time.sleep(delay)
    control.call("/device/approve", {"user_code": user_code})


def check_google_auth(c, control, ready):
    """google-auth refreshes against /google/token and keeps the (unrotated) refresh token."""
    refresh_token = control.call("/refresh-tokens", {
        "username": USERNAME, "client_id": GOOGLE_CLIENT_ID,
        "scope": " ".join(GOOGLE_SCOPES)})["refresh_token"]
    credentials = Credentials(None, refresh_token=refresh_token, client_id=GOOGLE_CLIENT_ID,
                              client_secret="GOCSPX-fidelity",
                              token_uri=f"{ready['base_url']}/google/token", scopes=GOOGLE_SCOPES)
    credentials.refresh(GoogleRequest())
    c.check("google-auth: Credentials.refresh gets an access token with an expiry",
            bool(credentials.token) and credentials.expiry is not None and credentials.valid)
    c.check("google-auth: the refresh token is kept (Google sends none back)",
            credentials.refresh_token == refresh_token)
    sent = control.call("/requests?endpoint=google.token")["requests"][-1]["form"]
    c.check("google-auth: the refresh request carries client_secret and the scopes",
            sent.get("client_secret") == "GOCSPX-fidelity"
            and sent.get("scope") == " ".join(GOOGLE_SCOPES), sent)
    control.call("/revoke", {"token": refresh_token})
    try:
        credentials.refresh(GoogleRequest())
        error = "no error"
    except google.auth.exceptions.RefreshError as e:
        error = str(e)
    c.check("google-auth: a revoked grant raises RefreshError with invalid_grant",
            "invalid_grant" in error, error)


def main(ready_file):
    with open(ready_file) as f:
        ready = json.load(f)
    control = Control(ready)
    control.call("/reset", {})
    control.call("/options", {"device_code_interval": 1, "refresh_token_mode": "rotate",
                              "refresh_token_reuse": "reject"})
    control.call("/user", {"username": USERNAME, "name": "Fidelity User"})
    c = Checker()

    app = msal.PublicClientApplication(CLIENT_ID, authority=f"{ready['base_url']}/{TENANT}",
                                       instance_discovery=False, validate_authority=False)
    c.check("MSAL reads the openid-configuration (tenant discovery)",
            app.authority.device_authorization_endpoint.startswith(ready["base_url"]))

    flow = app.initiate_device_flow(scopes=SCOPES)
    if not c.check("initiate_device_flow returns a user code", "user_code" in flow, flow):
        return 1
    approver = threading.Thread(target=_approve_later, args=(control, flow["user_code"], 1.5))
    approver.start()
    result = app.acquire_token_by_device_flow(flow)
    approver.join()
    polls = control.call("/device?user_code=" + flow["user_code"])["polls"]
    c.check("device flow: MSAL keeps polling through authorization_pending",
            [p["answer"] for p in polls][:1] == ["authorization_pending"]
            and polls[-1]["answer"] == "success", polls)
    c.check("acquire_token_by_device_flow returns an access token", "access_token" in result,
            result)
    claims = result.get("id_token_claims", {})
    c.check("ID token claims decoded by MSAL carry preferred_username and oid",
            claims.get("preferred_username") == USERNAME and bool(claims.get("oid")), claims)
    c.check("access token validates at the emulator (introspect)",
            control.call("/introspect?token=" + quote(result.get("access_token", "")))
            .get("username") == USERNAME)

    accounts = app.get_accounts()
    c.check("get_accounts lists the account with the right username",
            [a["username"] for a in accounts] == [USERNAME], accounts)
    account = accounts[0] if accounts else None
    c.check("home_account_id is built from client_info (oid.tid)",
            account is not None and account["home_account_id"] == f"{claims.get('oid')}.{claims.get('tid')}",
            account)

    first_rt = result.get("refresh_token")
    silent = app.acquire_token_silent(SCOPES, account=account, force_refresh=True)
    refreshes = control.call("/requests?grant_type=refresh_token")["requests"]
    c.check("acquire_token_silent(force_refresh=True) succeeds",
            bool(silent) and "access_token" in silent, silent)
    c.check("... by a refresh_token grant with the device-flow refresh token",
            len(refreshes) == 1 and refreshes[0]["form"].get("refresh_token") == first_rt,
            [r["form"] for r in refreshes])
    c.check("... and returns a new access token",
            bool(silent) and silent.get("access_token") != result.get("access_token"))
    rotated = refreshes[-1]["response"].get("refresh_token") if refreshes else None
    cached = [rt["secret"] for rt in app.token_cache.search(msal.TokenCache.CredentialType.REFRESH_TOKEN)]
    c.check("MSAL stores the rotated refresh token", cached == [rotated] and rotated != first_rt,
            cached)

    again = app.acquire_token_silent(SCOPES, account=account, force_refresh=True)
    second = control.call("/requests?grant_type=refresh_token")["requests"][1:]
    c.check("a second silent refresh presents the rotated token (strict reuse policy accepts it)",
            bool(again) and second and second[0]["form"].get("refresh_token") == rotated, again)

    control.call("/user/flags", {"mfa_required": True})
    mfa = app.acquire_token_silent_with_error(SCOPES, account=account, force_refresh=True)
    c.check("MFA switch: MSAL surfaces interaction_required with AADSTS50076 and suberror",
            bool(mfa) and mfa.get("error") == "interaction_required"
            and 50076 in mfa.get("error_codes", []) and mfa.get("suberror") == "basic_action", mfa)
    control.call("/user/flags", {"mfa_required": False})

    # MSAL throttles a request identical to one that just failed, so ask through a second
    # application object (same token cache, fresh throttling cache).
    app = msal.PublicClientApplication(CLIENT_ID, authority=f"{ready['base_url']}/{TENANT}",
                                       instance_discovery=False, validate_authority=False,
                                       token_cache=app.token_cache)
    control.call("/revoke", {"username": USERNAME})
    revoked = app.acquire_token_silent_with_error(SCOPES, account=account, force_refresh=True)
    c.check("revoked grant: MSAL surfaces invalid_grant with AADSTS50173",
            bool(revoked) and revoked.get("error") == "invalid_grant"
            and revoked.get("error_codes") == [50173], revoked)

    declined = app.initiate_device_flow(scopes=SCOPES)
    control.call("/device/decline", {"user_code": declined["user_code"]})
    outcome = app.acquire_token_by_device_flow(declined)
    c.check("declined device code: MSAL stops with authorization_declined",
            outcome.get("error") == "authorization_declined", outcome)

    control.call("/options", {"auto_consent": True})
    warnings.filterwarnings("ignore", message="response_mode='form_post' is recommended")
    code_flow = app.initiate_auth_code_flow(SCOPES, redirect_uri="http://localhost:8400")
    location = control.follow_once(code_flow["auth_uri"])
    auth_response = dict(parse_qsl(urlsplit(location).query))
    c.check("auth code flow: /authorize redirects to the loopback URI with code and state",
            location.startswith("http://localhost:8400?")
            and auth_response.get("state") == code_flow["state"], location)
    by_code = app.acquire_token_by_auth_code_flow(code_flow, auth_response)
    c.check("acquire_token_by_auth_code_flow redeems the code with its PKCE verifier",
            "access_token" in by_code, by_code)

    check_google_auth(c, control, ready)

    print(f"{'PASS' if not c.failures else 'FAIL'}: MSAL {msal.__version__} and google-auth "
          f"{google.auth.__version__} fidelity check "
          f"({c.failures} failure(s))")
    return 1 if c.failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
