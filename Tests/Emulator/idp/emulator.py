"""The Emulator: wires store, providers, faults, request log and control API to one server."""

import ssl
import sys
import tempfile
import threading
import traceback
from dataclasses import asdict

from . import browser, tokens
from .azure import AzureProvider
from .certs import make_certs
from .control import ControlAPI
from .faults import FaultInjector
from .github import GitHub
from .google import GoogleProvider
from .oidc import GenericOIDC
from .options import Options
from .reqlog import RequestLog
from .server import LoopbackServer
from .sharepoint import SharePoint
from .store import DEFAULT_USERNAME, GrantStore
from .web import Route, Router, json_response


def _gaps(polls):
    return [b["t"] - a["t"] for a, b in zip(polls, polls[1:])]


class Emulator:
    """An identity provider (Azure AD v2.0 under /{tenant}, Google under /google, and a generic
    OpenID Provider at any path once `emu.oidc.configure(path=…)` is called) on 127.0.0.1.

        emu = Emulator(https=True, cert_dir=d, access_token_lifetime=60).start()
        emu.base_url, emu.ca_file   # authority and CA bundle for the client under test
        emu.approve()               # approve the latest pending device code
        emu.stop()

    `user` is who approves sign-ins (default user1@example.test), also after `reset`.
    Keyword options are those of `Options`. Every control method is also reachable over
    HTTP under `/_control/` (see control.py).
    """

    def __init__(self, https=False, cert_dir=None, port=0, verbose=False, user=None, **options):
        self.https = https
        self.cert_dir = cert_dir
        self.port = port
        self.verbose = verbose
        self.initial_options = dict(options)
        self.options = Options().update(**options)
        self.store = GrantStore(self.options, default_username=user or DEFAULT_USERNAME)
        self.faults = FaultInjector()
        self.log = RequestLog()
        self.sharepoint = SharePoint(self)
        self.oidc = GenericOIDC(self.store, self.options)
        self.github = GitHub(self.store, self.options)
        self.router = Router([
            *self.github.routes(),
            *self.sharepoint.routes(),
            *GoogleProvider(self.store, self.options).routes(),
            *AzureProvider(self.store, self.options).routes(),
            Route(("GET", "POST"), r"/devicelogin", "devicelogin",
                  lambda req: browser.device_login(self.store, req)),
        ])
        self.control = ControlAPI(self)
        self.ca_file = None
        self._server = None
        self._thread = None
        self._tmpdir = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self):
        """Listen (port 0: any free port) and serve in a background thread. Returns self."""
        context = None
        if self.https:
            if self.cert_dir is None:
                self._tmpdir = tempfile.TemporaryDirectory(prefix="idp-emulator-")
                self.cert_dir = self._tmpdir.name
            self.ca_file, cert, key = make_certs(self.cert_dir)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
        self._server = LoopbackServer(self, self.port, context, self.verbose)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="idp-emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._server:
            self._server.close()
            self._thread.join()
            self._server = None
        if self._tmpdir:
            self._tmpdir.cleanup()
            self._tmpdir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def base_url(self):
        return f"{'https' if self.https else 'http'}://127.0.0.1:{self.port}"

    @property
    def control_url(self):
        return self.base_url + "/_control"

    def elapsed(self):
        """Monotonic seconds since the emulator was made: the clock of logs and polls."""
        return self.store.now()

    # -- serving -------------------------------------------------------------------------

    def handle(self, request):
        """Answer one request: control API, or fault / provider endpoint (logged)."""
        if request.path == "/_control" or request.path.startswith("/_control/"):
            return self.control.handle(request)
        route, params = Router(self.oidc.routes()).match(request.path)
        if route is None:
            route, params = self.router.match(request.path)
        endpoint = route.endpoint if route else "unknown"
        entry = self.log.record(request, endpoint)
        fault = self.faults.take(endpoint, request)
        response = fault.apply() if fault else None
        if response is None:
            response = self._route(route, params, request)
        self.log.finish(entry, response, fault.kind if fault else None)
        return response

    def _route(self, route, params, request):
        if route is None:
            return json_response({"error": "not_found", "path": request.path}, 404)
        if request.method not in route.methods:
            return json_response({"error": "method_not_allowed"}, 405,
                                 {"Allow": ", ".join(route.methods)})
        try:
            return route.handler(request, **params)
        except Exception as e:  # an emulator bug: say so loudly, answer 500
            traceback.print_exc(file=sys.stderr)
            return json_response({"error": "server_error",
                                  "error_description": f"emulator bug: {e!r}"}, 500)

    # -- options and users ---------------------------------------------------------------

    def configure(self, **options):
        """Change options (see Options) while running. Returns all options."""
        with self.store.lock:
            return self.options.update(**options).as_dict()

    def set_user(self, username, oid=None, tid=None, name=None):
        """Make `username` (created if new) the user who approves sign-ins."""
        return asdict(self.store.set_user(username, oid, tid, name))

    def set_user_flags(self, username=None, mfa_required=None, consent_required=None,
                       step_up_resources=None):
        """Switch a user's refresh grants to interaction_required (MFA) / consent_required;
        `step_up_resources`: resources whose refreshes need MFA (interaction_required with a
        claims challenge) until a sign-in asks for them."""
        return asdict(self.store.set_user_flags(username, mfa_required, consent_required,
                                                step_up_resources))

    # -- device codes --------------------------------------------------------------------

    def approve(self, user_code=None, username=None):
        """Approve a pending device code (default: the latest) as `username` (default: approving user)."""
        return self._device_summary(self.store.approve(user_code, username))

    def decline(self, user_code=None):
        return self._device_summary(self.store.decline(user_code))

    def script_device_polls(self, answers, user_code=None):
        """Poll answers for a device code, or (no user_code) for the next one created.

        e.g. ["authorization_pending", "slow_down", {"error": "slow_down", "interval": 15},
        "authorization_pending", "success"]; afterwards the code's state answers again.
        """
        self.store.script_device_polls(answers, user_code)

    def device_code(self, user_code=None):
        """A device code (default: the latest) with its polls and the gaps between them."""
        return self._device_summary(self.store.device_code(user_code))

    def device_polls(self, user_code=None):
        return self.device_code(user_code)["polls"]

    def poll_gaps(self, user_code=None):
        return self.device_code(user_code)["gaps"]

    def _device_summary(self, dc):
        with self.store.lock:
            summary = asdict(dc)
        summary["scope"] = " ".join(summary.pop("scopes"))
        summary["gaps"] = _gaps(summary["polls"])
        return summary

    # -- tokens --------------------------------------------------------------------------

    def add_refresh_token(self, token=None, username=None, client_id=None,
                          scope="openid profile offline_access"):
        """Register a refresh token a test put in the store itself (e.g. "RT1"). Returns it.

        `client_id` None lets any client redeem it; `username` None is the approving user.
        """
        return self.store.add_refresh_token(username, client_id, tokens.split_scopes(scope),
                                            token).token

    def revoke(self, token):
        """Revoke a refresh token's grant (all its rotations) or one access token. Returns a count."""
        return self.store.revoke(token)

    def revoke_user(self, username=None):
        """Revoke all refresh tokens of a user (default: the approving user). Returns a count."""
        return self.store.revoke_user(self.store.user(username).username)

    def validate_access_token(self, token):
        """{"active", "username", "oid", "tid", "client_id", "scope", "aud", "iat", "exp"} or None."""
        return self.store.validate_access_token(token)

    # -- faults, log, state --------------------------------------------------------------

    def add_fault(self, kind, endpoint="*", count=1, **params):
        """Queue a fault (see faults.Fault): add_fault("status", "token", status=503, retry_after=2)."""
        return asdict(self.faults.add(kind=kind, endpoint=endpoint, count=count, **params))

    def clear_faults(self):
        self.faults.clear()

    def pending_faults(self):
        return self.faults.list()

    def requests(self, path_contains=None, grant_type=None, endpoint=None, method=None):
        """Logged requests matching every given filter, oldest first."""
        return self.log.find(path_contains, grant_type, endpoint, method)

    def state(self):
        return {"base_url": self.base_url, "options": self.options.as_dict(),
                "faults": self.faults.list(), "requests": len(self.log.entries),
                **self.store.snapshot()}

    def reset(self):
        """Forget codes, tokens, users, faults and the log; options return to the initial ones."""
        with self.store.lock:
            self.options.update(**Options().as_dict())
            self.options.update(**self.initial_options)
            self.store.reset()
        self.sharepoint.reset()
        self.oidc.reset()
        self.github.reset()
        self.faults.clear()
        self.log.clear()
