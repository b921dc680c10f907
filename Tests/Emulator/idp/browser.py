"""What the browser sees: consent pages and the redirect back to the client, for every provider."""

import html
from urllib.parse import urlencode, urlsplit

from .web import html_response, redirect

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def redirect_allowed(uri, http_hosts=LOOPBACK_HOSTS):
    """https anywhere; http only to the given loopback host names."""
    parts = urlsplit(uri or "")
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in http_hosts)


def _hidden(params):
    return "".join(f"<input type=hidden name='{html.escape(k, True)}' value='{html.escape(v, True)}'>"
                   for k, v in params.items())


def send_to(uri, mode, params):
    """Hand `params` back to the client: query (default), fragment, or an auto-posted form."""
    params = {k: v for k, v in params.items() if v is not None}
    if mode == "form_post":
        return html_response(f"<!doctype html><body onload='document.forms[0].submit()'>"
                             f"<form method=post action='{html.escape(uri, True)}'>{_hidden(params)}"
                             f"<noscript><button>Continue</button></noscript></form>")
    separator = "#" if mode == "fragment" else ("&" if "?" in uri else "?")
    return redirect(uri + separator + urlencode(params))


def consent_page(client_id, username, scope, params):
    """A form that posts the authorization request back with decision=approve|decline."""
    return html_response(
        f"<!doctype html><title>Emulator sign-in</title><h1>{html.escape(client_id)} wants "
        f"access</h1><p>User: {html.escape(username)}<br>Scopes: {html.escape(scope)}</p>"
        f"<form method=post>{_hidden({k: v for k, v in params.items() if k != 'decision'})}"
        "<button name=decision value=approve>Accept</button> "
        "<button name=decision value=decline>Cancel</button></form>")


def error_page(message, status=400):
    return html_response(f"<!doctype html><title>Sign-in error</title><p>{html.escape(message)}",
                         status)


def consent_step(req, uri, auto_consent, username, issue_code, declined):
    """The end of every authorize endpoint, once the request is valid.

    A POSTed `decision=decline` redirects with the `declined` error params; `decision=approve`
    (or `auto_consent`) calls `issue_code()` and redirects with the code; otherwise the
    consent page is shown. `state` always travels back.
    """
    params = req.params
    mode, state = params.get("response_mode", "query"), params.get("state")
    decision = params.get("decision") if req.method == "POST" else None
    if decision == "decline":
        return send_to(uri, mode, {**declined, "state": state})
    if auto_consent or decision == "approve":
        return send_to(uri, mode, {"code": issue_code(), "state": state})
    return consent_page(params["client_id"], username, params.get("scope", ""), params)


def device_login(store, req):
    """The emulator's own verification page (GET|POST /devicelogin): enter a user code,
    approve it as the approving user, or decline it."""
    params = req.params
    note = ""
    if req.method == "POST":
        try:
            if params.get("decision") == "decline":
                store.decline(params.get("otc", ""))
                note = "Sign-in declined."
            else:
                note = f"Signed in as {store.approve(params.get('otc', '')).username}. " \
                       "You can close this window."
        except LookupError:
            note = "We don't recognize this code."
    return html_response(
        "<!doctype html><title>Emulator device login</title><h1>Enter code</h1>"
        f"<p>{html.escape(note)}</p><form method=post action=/devicelogin>"
        f"<input name=otc value='{html.escape(params.get('otc', ''), True)}'>"
        "<button name=decision value=approve>Approve</button>"
        "<button name=decision value=decline>Decline</button></form>")
