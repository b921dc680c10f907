"""Injected failures: per endpoint, consumed in the order they were added."""

import threading
import time
import uuid
from dataclasses import asdict, dataclass

from .web import DROP, Response, html_response, json_response

KINDS = ("status", "delay", "html", "invalid_json", "drop", "json", "empty", "redirect", "request_loop", "refusal")

_PROXY_PAGE = ("<html>\r\n<head><title>{status} Bad Gateway</title></head>\r\n<body>\r\n"
               "<center><h1>{status} Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
               "</body>\r\n</html>\r\n")


@dataclass
class Fault:
    """One failure, applied to the next `count` matching requests.

    - status: answer `status` (default 503) with a JSON error body, and `Retry-After:
      retry_after` when given.
    - delay: wait `seconds`, then answer normally.
    - html: a proxy's HTML error page, `text/html`, status default 502; `body` (a string), when
      given, is the page instead (a Zscaler-like interstitial, bug-cases-3 X06).
    - invalid_json: `application/json` that does not parse, status default 200.
    - drop: close the connection without a reply.
    - empty: `status` (default 400) with an empty `text/plain` body and no OAuth error.
    - request_loop: Entra's request-loop detection as user-facing calls get it: 400
      `invalid_grant` with AADSTS50196 in `error_codes` and the description (a throttle, not a
      dead grant; `Retry-After` only when given).
    - json: answer `body` (any JSON value, e.g. an error object that echoes a token) as
      `content_type` (default `application/json`), status default 400, `Retry-After` when given.
    - redirect: `status` (default 302) with `Location: location` and a small HTML body, as a
      proxy or SSO layer answers in place of the server.
    - refusal: an OAuth error in Entra's shape (protocols.md §2.7): `error` (default
      `invalid_grant`), `error_codes` (AADSTS numbers; the first prefixes the description),
      `error_description` (default: a generic text), `suberror` and `claims` only when given,
      `timestamp`, `trace_id`, `correlation_id`, `error_uri`; status default 400. Conditional
      Access answers refreshes for one resource so (AADSTS530003 as `invalid_grant`, no suberror).
    `endpoint` is a route name ("token", "devicecode", …) or "*"; `grant_type` narrows a
    fault to token requests of that grant type; `scope` to requests whose `scope` field holds a
    scope of that resource (`https://graph.microsoft.com` matches `…/.default` and `…/User.Read`)
    or that very scope. `headers` are added to any faulty answer (e.g.
    `{"Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"}` or Okta's `X-Rate-Limit-Reset`).
    """
    kind: str
    endpoint: str = "*"
    count: int = 1
    status: int | None = None
    retry_after: int | None = None
    seconds: float = 0.0
    grant_type: str | None = None
    body: object = None
    location: str | None = None
    content_type: str | None = None
    headers: dict | None = None
    scope: str | None = None
    error: str | None = None
    error_codes: list | None = None
    error_description: str | None = None
    suberror: str | None = None
    claims: str | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"fault kind must be one of {KINDS}")
        if self.count < 1:
            raise ValueError("fault count must be at least 1")
        if self.kind == "json" and self.body is None:
            raise ValueError("a json fault needs a body")
        if self.kind == "redirect" and not self.location:
            raise ValueError("a redirect fault needs a location")

    def matches(self, endpoint, request):
        if self.endpoint not in ("*", endpoint):
            return False
        if self.grant_type is not None and request.form.get("grant_type") != self.grant_type:
            return False
        if self.scope is None:
            return True
        resource = self.scope.rstrip("/")
        return any(s == self.scope or s.startswith(resource + "/")
                   for s in (request.form.get("scope") or "").split())

    def apply(self):
        """Sleep for a delay and return None (go on), or return the faulty Response / DROP."""
        response = self._answer()
        if isinstance(response, Response) and self.headers:
            response.headers.update({str(k): str(v) for k, v in self.headers.items()})
        return response

    def _answer(self):
        if self.kind == "delay":
            time.sleep(self.seconds)
            return None
        if self.kind == "drop":
            return DROP
        if self.kind == "html":
            status = self.status or 502
            return html_response(self.body if isinstance(self.body, str) else _PROXY_PAGE.format(status=status),
                                 status)
        if self.kind == "redirect":
            page = f'<html><body>Moved: <a href="{self.location}">here</a></body></html>'
            return Response(self.status or 302, page.encode(), "text/html; charset=utf-8",
                            {"Location": self.location})
        if self.kind == "empty":  # Glewlwyd's answer to a dead refresh token: a bare 400
            return Response(self.status or 400, b"", "text/plain")
        if self.kind == "invalid_json":
            return Response(self.status or 200, b'{"access_token": "AT-trunc', "application/json")
        headers = {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}
        if self.kind == "json":
            response = json_response(self.body, self.status or 400, headers)
            if self.content_type:
                response.content_type = self.content_type
            return response
        if self.kind == "request_loop":
            return json_response(_request_loop_body(), self.status or 400, headers)
        if self.kind == "refusal":
            return json_response(self._refusal_body(), self.status or 400, headers)
        status = self.status or 503
        error = "temporarily_unavailable" if status in (429, 503) else "server_error"
        return json_response({"error": error, "error_description": f"Injected HTTP {status}."},
                             status, headers)


    def _refusal_body(self):
        codes = [int(c) for c in self.error_codes or ()]
        description = self.error_description or (
            (f"AADSTS{codes[0]}: " if codes else "") + "The request was refused by the emulator's scripted refusal.")
        body = _entra_error(self.error or "invalid_grant", description, codes)
        if self.suberror is not None:
            body["suberror"] = self.suberror
        if self.claims is not None:
            body["claims"] = self.claims
        return body


def _entra_error(error, description, codes):
    """An Entra error body (protocols.md §2.7): the description followed by the trace lines."""
    trace, correlation = str(uuid.uuid4()), str(uuid.uuid4())
    stamp = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())
    body = {"error": error,
            "error_description": f"{description}\r\nTrace ID: {trace}\r\nCorrelation ID: {correlation}\r\n"
                                 f"Timestamp: {stamp}",
            "error_codes": codes, "timestamp": stamp, "trace_id": trace, "correlation_id": correlation}
    if codes:
        body["error_uri"] = f"https://login.microsoftonline.com/error?code={codes[0]}"
    return body


def _request_loop_body():
    """The shape of Entra's AADSTS50196 reply (protocols.md §2.7 fields)."""
    trace, correlation = str(uuid.uuid4()), str(uuid.uuid4())
    stamp = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())
    return {
        "error": "invalid_grant",
        "error_description": ("AADSTS50196: The server terminated an operation because it encountered a client "
                              "request loop. Please contact your app vendor. Trace ID: %s Correlation ID: %s "
                              "Timestamp: %s" % (trace, correlation, stamp)),
        "error_codes": [50196], "timestamp": stamp, "trace_id": trace, "correlation_id": correlation,
        "error_uri": "https://login.microsoftonline.com/error?code=50196",
    }


class FaultInjector:
    """The queue of pending faults."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pending = []

    def add(self, **spec):
        fault = Fault(**spec)
        with self.lock:
            self.pending.append(fault)
        return fault

    def take(self, endpoint, request):
        """The first pending fault for this request, its count consumed; or None."""
        with self.lock:
            for fault in self.pending:
                if fault.matches(endpoint, request):
                    fault.count -= 1
                    if fault.count == 0:
                        self.pending.remove(fault)
                    return fault
        return None

    def clear(self):
        with self.lock:
            self.pending.clear()

    def list(self):
        with self.lock:
            return [asdict(f) for f in self.pending]

