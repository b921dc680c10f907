"""SharePoint Online endpoints (protocols.md §4.2, §4.1) on the emulator's own origin.

One site per origin: the site is `req.base_url` (e.g. `https://127.0.0.1:PORT`).

- `POST /_api/SP.OAuth.NativeClient/Authenticate` with `Authorization: Bearer T`: T must be a live
  emulator access token whose audience is the site and not refused (`refuse_bearer`); answers 200 with
  `Set-Cookie: SPOIDCRL=…; path=/; secure; HttpOnly; expires=…` (lifetime `spoidcrl_lifetime` s).
- `PROPFIND` (WebDAV, RFC 4918) of `/sites/team/Shared Documents/` and below: a fixed folder
  (`report.txt`, `notes/`) as a 207 multistatus, with the same credentials as `/_api/web`; what
  rclone's webdav backend lists.
- `GET /_api/web` (also `/_api/web/...`): 200 with a small JSON body for a live `SPOIDCRL`, a live
  `FedAuth` plus `rtFa` pair, or a bearer token for the site; 401 without any credential; 403 with
  `X-MSDAVEXT_Error: 917656; …` for expired or unknown cookies (rclone#2562).
"""

import secrets
import threading
import time
from email.utils import formatdate

from .web import Response, Route, json_response

DAV_ERROR = ("917656; Access denied. Before opening files in this location, you must first browse "
             "to the website and select the option to login automatically.")


def parse_cookies(header):
    """`a=1; b=2` → {"a": "1", "b": "2"} (later duplicates win)."""
    out = {}
    for part in (header or "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name:
            out[name] = value
    return out


class SharePoint:
    """Cookie state of the emulated site(s); thread-safe. Times are wall-clock Unix seconds."""

    def __init__(self, emulator):
        self.emu = emulator
        self.lock = threading.Lock()
        self.spoidcrl_lifetime = 3600
        self.cookies = {}  # value -> {"name", "exp", "site"}
        self.issued = []  # SPOIDCRL values in issue order
        self.refused = set()  # bearer tokens the site answers 401 to; "*" refuses every bearer

    def routes(self):
        return [
            Route(("POST",), r"/_api/SP\.OAuth\.NativeClient/Authenticate", "sp.authenticate", self.authenticate),
            Route(("GET", "HEAD"), r"/_api/web(?:/.*)?", "sp.web", self.web),
            Route(("PROPFIND",), r"/sites/team/(?P<path>.*)", "sp.dav", self.propfind),
        ]

    # -- control (used by tests) --------------------------------------------------------

    def add_cookies(self, lifetime, site=None):
        """Registers an imported FedAuth/rtFa pair living `lifetime` s; returns (fedauth, rtfa, exp)."""
        exp = int(time.time() + lifetime)
        fedauth, rtfa = "77u" + secrets.token_urlsafe(24), "rtFa" + secrets.token_urlsafe(24)
        with self.lock:
            self.cookies[fedauth] = {"name": "FedAuth", "exp": exp, "site": site}
            self.cookies[rtfa] = {"name": "rtFa", "exp": exp, "site": site}
        return fedauth, rtfa, exp

    def expire(self, value=None):
        """Expires one cookie (default: every cookie) now. Returns how many."""
        with self.lock:
            targets = [value] if value else list(self.cookies)
            for v in targets:
                if v in self.cookies:
                    self.cookies[v]["exp"] = 0
            return len([v for v in targets if v in self.cookies])

    def refuse_bearer(self, token=None):
        """Makes the cookie exchange answer 401 to `token` (default: to every bearer), though it is
        still live at the token issuer: a site revoking a token before its expiry."""
        with self.lock:
            self.refused.add(token or "*")

    def reset(self):
        """Forget every cookie and refusal (Emulator.reset)."""
        with self.lock:
            self.cookies.clear()
            self.issued.clear()
            self.refused.clear()

    def _live(self, name, value, site):
        c = self.cookies.get(value)
        return (c is not None and c["name"] == name and time.time() < c["exp"]
                and c["site"] in (None, site))

    # -- endpoints ------------------------------------------------------------------------

    def _bearer(self, req):
        auth = req.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return None
        info = self.emu.validate_access_token(auth[len("Bearer "):].strip())
        if info is None or info["aud"].rstrip("/") != req.base_url:
            return False
        return info

    def authenticate(self, req):
        info = self._bearer(req)
        token = req.headers.get("authorization", "")[len("Bearer "):].strip()
        with self.lock:
            refused = "*" in self.refused or token in self.refused
        if not info or refused:
            return json_response({"error": {"code": "-2147024891, System.UnauthorizedAccessException",
                                            "message": "Access denied."}}, 401,
                                 {"WWW-Authenticate": f'Bearer realm="emulator", client_id='
                                  f'"00000003-0000-0ff1-ce00-000000000000"'})
        value = "SP" + secrets.token_urlsafe(32)
        with self.lock:
            exp = int(time.time() + self.spoidcrl_lifetime)
            self.cookies[value] = {"name": "SPOIDCRL", "exp": exp, "site": req.base_url}
            self.issued.append(value)
        cookie = (f"SPOIDCRL={value}; expires={formatdate(exp, usegmt=True)}; path=/; secure; HttpOnly")
        return json_response({"d": {"Authenticate": None}}, 200, {"Set-Cookie": cookie})

    def web(self, req):
        refusal = self._refusal(req)
        return refusal or self._ok(req)

    # A fixed document library: path (below /sites/team/, decoded) -> size, or None for a folder.
    LIBRARY = {"Shared Documents/": None, "Shared Documents/report.txt": 12, "Shared Documents/notes/": None}

    def propfind(self, req, path):
        refusal = self._refusal(req)
        if refusal:
            return refusal
        from urllib.parse import quote, unquote
        path = unquote(path)
        if path and not path.endswith("/") and path + "/" in self.LIBRARY:
            path += "/"
        if path not in self.LIBRARY:
            return Response(404, b"", "text/plain")
        entries = [path]
        if self.LIBRARY[path] is None and req.headers.get("depth", "1") != "0":
            entries += sorted(p for p in self.LIBRARY if p != path and p.startswith(path)
                              and "/" not in p[len(path):].rstrip("/"))
        date = formatdate(time.time(), usegmt=True)
        parts = []
        for p in entries:
            size = self.LIBRARY[p]
            kind = "<D:resourcetype><D:collection/></D:resourcetype>" if size is None else (
                f"<D:resourcetype/><D:getcontentlength>{size}</D:getcontentlength>")
            parts.append(f"<D:response><D:href>/sites/team/{quote(p)}</D:href><D:propstat><D:prop>{kind}"
                         f"<D:getlastmodified>{date}</D:getlastmodified></D:prop>"
                         "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>")
        body = '<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">' + "".join(parts) + "</D:multistatus>"
        return Response(207, body.encode(), 'application/xml; charset="utf-8"')

    def _refusal(self, req):
        """None when the request carries a live credential for the site, else the refusal."""
        if self._bearer(req):
            return None
        jar = parse_cookies(req.headers.get("cookie"))
        with self.lock:
            if "SPOIDCRL" in jar and self._live("SPOIDCRL", jar["SPOIDCRL"], req.base_url):
                return None
            if ("FedAuth" in jar and "rtFa" in jar and self._live("FedAuth", jar["FedAuth"], req.base_url)
                    and self._live("rtFa", jar["rtFa"], req.base_url)):
                return None
        if not jar and "authorization" not in req.headers:
            return json_response({"error": {"message": "Unauthorized"}}, 401)
        return Response(403, b'{"error":{"message":"Access denied."}}', "application/json",
                        {"X-MSDAVEXT_Error": DAV_ERROR})

    @staticmethod
    def _ok(req):
        return json_response({"d": {"Title": "Emulated site", "Url": req.base_url}})
