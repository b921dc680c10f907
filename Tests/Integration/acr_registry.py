"""An Azure Container Registry stand-in on loopback: Debian's `docker-registry` (distribution) with
token authentication behind a small HTTPS front that plays ACR's own endpoints, as one host
(`localhost:PORT`) the way `NAME.azurecr.io` is one host:

- `POST /oauth2/exchange` (Azure/acr `docs/AAD-OAuth.md`): form `grant_type=access_token`,
  `service`, `tenant`, `access_token`; the access token must be one the identity provider emulator
  issued and still holds valid (`Emulator.validate_access_token`), for the registry's audience and
  of the tenant named; the reply `{"refresh_token": JWT}` carries an `exp` `refresh_lifetime`
  seconds ahead. Anything else is 401.
- `GET /oauth2/token?service=…&scope=…` with Basic auth `00000000-0000-0000-0000-000000000000` and a
  registry refresh token this front issued and that has not expired (what docker, podman and
  skopeo send for a credential helper's Username/Secret), or `POST /oauth2/token` with
  `grant_type=refresh_token`: a registry access token, an RS256 JWT with `x5c`, signed by a key
  whose certificate is the registry's `rootcertbundle` (distribution `registry/auth/token`).
- Everything else is forwarded to the registry (TLS on 127.0.0.1, the test CA), whose challenge
  names this front's `/oauth2/token` as realm.

    reg = ACRRegistry(emu, cert_dir, workdir).start()
    reg.host                     # localhost:PORT, the registry's name for clients
    reg.exchanges, reg.blob_requests, reg.token_requests
    reg.exchange_status = 401    # the next exchanges answer this status (None: normal)
    reg.stop()
"""
import base64
import hashlib
import http.client
import http.server
import json
import os
import secrets
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse

USERNAME = "00000000-0000-0000-0000-000000000000"
AUDIENCE = "https://containerregistry.azure.net"
ISSUER = "tokenbroker-test-acr"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection",
              "content-length"}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ACRRegistry:
    def __init__(self, emu, cert_dir, workdir, refresh_lifetime=3 * 3600):
        self.emu = emu
        self.cert_dir = cert_dir
        self.workdir = workdir
        self.refresh_lifetime = refresh_lifetime
        self.exchange_status = None
        self.exchange_body = None
        self.exchanges = []       # form fields of each exchange request (tokens elided)
        self.token_requests = []  # (method, scopes, accepted)
        self.blob_requests = 0
        self.issued = {}          # registry refresh token -> exp
        self.lock = threading.Lock()
        self.port = free_port()
        self.registry_port = free_port()
        self.host = "localhost:%d" % self.port
        self._registry = None
        self._server = None
        self._make_signing_key()

    # -- the registry --------------------------------------------------------------------

    def _make_signing_key(self):
        self.sign_key = os.path.join(self.workdir, "token-sign.key")
        self.sign_cert = os.path.join(self.workdir, "token-sign.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", self.sign_key,
                        "-out", self.sign_cert, "-days", "2", "-subj", "/CN=tokenbroker test registry token signer"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        der = subprocess.run(["openssl", "x509", "-in", self.sign_cert, "-outform", "DER"], check=True,
                             capture_output=True).stdout
        self.x5c = base64.b64encode(der).decode()

    def _registry_config(self):
        cert, key = os.path.join(self.cert_dir, "server.pem"), os.path.join(self.cert_dir, "server.key")
        storage = os.path.join(self.workdir, "registry-storage")
        return f"""version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: {storage}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:{self.registry_port}
  host: https://{self.host}
  secret: {secrets.token_hex(16)}
  tls:
    certificate: {cert}
    key: {key}
auth:
  token:
    realm: https://{self.host}/oauth2/token
    service: {self.host}
    issuer: {ISSUER}
    rootcertbundle: {self.sign_cert}
"""

    def start(self):
        path = os.path.join(self.workdir, "registry.yml")
        with open(path, "w") as f:
            f.write(self._registry_config())
        self.registry_log = open(os.path.join(self.workdir, "registry.log"), "wb")
        self._registry = subprocess.Popen(["docker-registry", "serve", path], stdout=self.registry_log,
                                          stderr=subprocess.STDOUT)
        self.upstream_context = ssl.create_default_context(cafile=os.path.join(self.cert_dir, "ca.pem"))
        deadline = time.time() + 30
        while True:
            try:
                c = http.client.HTTPSConnection("127.0.0.1", self.registry_port, context=self.upstream_context,
                                                timeout=5)
                c.request("GET", "/v2/")
                status = c.getresponse().status
                c.close()
                if status == 401:
                    break
            except OSError:
                pass
            if time.time() > deadline or self._registry.poll() is not None:
                raise RuntimeError("docker-registry did not start: " + self.log())
            time.sleep(0.1)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(self.cert_dir, "server.pem"), os.path.join(self.cert_dir, "server.key"))
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        self._server.daemon_threads = True
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.acr = self
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._registry:
            self._registry.terminate()
            try:
                self._registry.wait(10)
            except subprocess.TimeoutExpired:
                self._registry.kill()
                self._registry.wait()
            self._registry = None
            self.registry_log.close()

    def log(self):
        try:
            with open(os.path.join(self.workdir, "registry.log"), "rb") as f:
                return f.read().decode(errors="replace")[-2000:]
        except OSError:
            return ""

    # -- tokens --------------------------------------------------------------------------

    def sign(self, claims):
        header = {"typ": "JWT", "alg": "RS256", "x5c": [self.x5c]}
        signing_input = (b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())).encode()
        signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.sign_key], input=signing_input,
                                   check=True, capture_output=True).stdout
        return signing_input.decode() + "." + b64url(signature)

    def exchange(self, form):
        """(status, body) of one `/oauth2/exchange`."""
        with self.lock:
            self.exchanges.append({k: v for k, v in form.items() if k != "access_token"})
            forced, body = self.exchange_status, self.exchange_body
        if forced is not None:
            return forced, body if body is not None else json.dumps({"errors": [{"code": "FORCED"}]})
        info = self.emu.validate_access_token(form.get("access_token", ""))
        ok = (form.get("grant_type") == "access_token" and form.get("service") == self.host and info is not None
              and AUDIENCE in str(info.get("aud")) and form.get("tenant") == info.get("tid"))
        if not ok:
            return 401, json.dumps({"errors": [{"code": "UNAUTHORIZED", "message": "invalid access token"}]})
        now = int(time.time())
        exp = now + int(self.refresh_lifetime)
        token = self.sign({"jti": secrets.token_hex(8), "sub": info["username"], "tenant": info["tid"],
                           "aud": self.host, "iss": ISSUER, "iat": now, "nbf": now, "exp": exp,
                           "grant_type": "refresh_token", "permissions": {"actions": ["*"]}})
        with self.lock:
            self.issued[token] = exp
        return 200, json.dumps({"refresh_token": token})

    def access_token(self, refresh_token, scopes):
        """A registry access token for `scopes` (`repository:NAME:ACTIONS`), or None."""
        with self.lock:
            exp = self.issued.get(refresh_token)
        if exp is None or time.time() >= exp:
            return None
        access = []
        for scope in scopes:
            parts = scope.split(":")
            if len(parts) == 3:
                access.append({"type": parts[0], "name": parts[1], "actions": parts[2].split(",")})
        now = int(time.time())
        return self.sign({"iss": ISSUER, "sub": USERNAME, "aud": self.host, "exp": now + 300, "nbf": now - 10,
                          "iat": now, "jti": secrets.token_hex(8), "access": access})

    def count(self, what):
        with self.lock:
            return {"exchanges": len(self.exchanges), "blobs": self.blob_requests}[what]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    @property
    def acr(self):
        return self.server.acr

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def reply(self, status, body, content_type="application/json", headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.body()
        if url.path == "/oauth2/exchange" and self.command == "POST":
            form = {k: v[-1] for k, v in urllib.parse.parse_qs(body.decode(errors="replace")).items()}
            status, text = self.acr.exchange(form)
            return self.reply(status, text, "text/html" if text.lstrip().startswith("<") else "application/json")
        if url.path == "/oauth2/token":
            return self.token(url, body)
        return self.forward(body)

    def token(self, url, body):
        query = urllib.parse.parse_qs(url.query)
        scopes = query.get("scope", [])
        refresh = None
        if self.command == "GET":
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Basic "):
                user, _, password = base64.b64decode(auth[6:]).decode(errors="replace").partition(":")
                refresh = password if user == USERNAME else None
        else:
            form = urllib.parse.parse_qs(body.decode(errors="replace"))
            scopes = scopes + " ".join(form.get("scope", [])).split()
            if form.get("grant_type") == ["refresh_token"]:
                refresh = form.get("refresh_token", [None])[-1]
            elif form.get("grant_type") == ["password"] and form.get("username") == [USERNAME]:
                refresh = form.get("password", [None])[-1]
        token = self.acr.access_token(refresh, scopes) if refresh else None
        with self.acr.lock:
            self.acr.token_requests.append((self.command, scopes, token is not None))
        if token is None:
            return self.reply(401, json.dumps({"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]}),
                              headers=[("WWW-Authenticate", 'Basic realm="%s"' % self.acr.host)])
        return self.reply(200, json.dumps({"token": token, "access_token": token, "expires_in": 300}))

    def forward(self, body):
        if "/blobs/" in self.path:
            with self.acr.lock:
                self.acr.blob_requests += 1
        upstream = http.client.HTTPSConnection("127.0.0.1", self.acr.registry_port, context=self.acr.upstream_context,
                                               timeout=30)
        try:
            # Header by header: clients repeat some (skopeo sends one Accept per manifest type).
            upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() not in HOP_BY_HOP:
                    upstream.putheader(name, value)
            if body or self.command in ("PUT", "POST", "PATCH"):
                upstream.putheader("Content-Length", str(len(body)))
            upstream.endheaders(body or None)
            response = upstream.getresponse()
            data = response.read()
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            if self.command == "HEAD":
                length = response.getheader("Content-Length")
                if length is not None:
                    self.send_header("Content-Length", length)
            else:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        finally:
            upstream.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()
