"""Plain HTTP on loopback for the fixtures that run a real provider (glewlwyd.py, dot_provider.py):
a free port to give it, and one request with no redirect followed, as their REST APIs and web
forms are played."""
import http.client
import json
import socket
import urllib.parse


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, form=None, headers=None, cookie=None):
    """One request to 127.0.0.1:`port`: `body` sent as JSON, or `form` as
    application/x-www-form-urlencoded; returns (status, headers with lower-case names, body
    bytes). Redirects are not followed."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        h["Content-Type"] = "application/x-www-form-urlencoded"
    if cookie:
        h["Cookie"] = cookie
    try:
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()
