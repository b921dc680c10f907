"""Plain request/response values and the path router shared by every endpoint."""

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import parse_qs

# Returned by a handler (or a fault) to close the connection without any reply.
DROP = object()

JSON_TYPE = "application/json; charset=utf-8"
NO_STORE = {"Cache-Control": "no-store, no-cache", "Pragma": "no-cache"}


def parse_form(raw):
    """Decode `a=1&b=2` into a dict of first values (blank values kept)."""
    return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}


@dataclass
class Request:
    """One HTTP request as the handlers see it. Header names are lower-case."""
    method: str
    path: str
    query: dict
    headers: dict
    body: bytes
    base_url: str
    t: float  # monotonic seconds since the emulator started

    @cached_property
    def form(self):
        """The url-encoded body fields (empty for other content types)."""
        if not self.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            return {}
        return parse_form(self.body.decode("utf-8", "replace"))

    @property
    def params(self):
        """The query for GET, the form for POST (as the authorize endpoint reads them)."""
        return self.query if self.method == "GET" else self.form

    def json(self):
        """The body parsed as JSON (an empty body is `{}`)."""
        return json.loads(self.body) if self.body.strip() else {}


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = JSON_TYPE
    headers: dict = field(default_factory=dict)


def json_response(obj, status=200, headers=None):
    return Response(status, json.dumps(obj).encode(), JSON_TYPE, dict(headers or {}))


def html_response(html, status=200):
    return Response(status, html.encode(), "text/html; charset=utf-8")


def redirect(location):
    return Response(302, b"", "text/html; charset=utf-8", {"Location": location})


@dataclass
class Route:
    """`pattern` is a regex over the path; its named groups become handler keyword arguments."""
    methods: tuple
    pattern: str
    endpoint: str  # the name faults and the request log use
    handler: object

    def __post_init__(self):
        self.regex = re.compile(self.pattern)


class Router:
    """Finds the route of a request; first matching pattern wins."""

    def __init__(self, routes):
        self.routes = list(routes)

    def match(self, path):
        """Return `(route, params)` or `(None, None)`."""
        for route in self.routes:
            m = route.regex.fullmatch(path)
            if m:
                return route, m.groupdict()
        return None, None
