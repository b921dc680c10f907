"""A real `git clone` / `git ls-remote` over HTTPS with the broker as git's credential helper,
against a tiny local smart-HTTP git server (`git http-backend` behind Python's http.server, TLS
with the emulator's CA) that answers 401 unless the request carries a token the emulator
validates (interface.md §4, README "Use it from git")."""
import base64
import http.server
import os
import ssl
import subprocess
import threading
import unittest

from harness import TOKENBROKER
from test_git_helper import GitTestCase


class _GitHTTPHandler(http.server.BaseHTTPRequestHandler):
    """Serves the bare repositories under `server.root` through `git http-backend` (smart HTTP),
    answering 401 `WWW-Authenticate: Basic` unless the Authorization carries a token the
    emulator validates."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.serve()

    def do_POST(self):
        self.serve()

    def authorized(self):
        auth = self.headers.get("Authorization", "")
        token = None
        if auth.startswith("Basic "):
            user, _, token = base64.b64decode(auth[6:]).decode().partition(":")
        elif auth.startswith("Bearer "):
            token = auth[7:]
        self.server.seen.append(auth.split(" ", 1)[0] if auth else None)
        return bool(token) and self.accepts(token)

    def accepts(self, token):
        """Whether `token` may read this request's repository (subclasses: per path)."""
        return bool(self.server.validate(token))

    def challenges(self):
        """The `WWW-Authenticate` values of a 401."""
        return ['Basic realm="tokenbroker test"']

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def serve(self):
        body = self.read_body() if self.command == "POST" else b""
        if not self.authorized():
            self.send_response(401)
            for challenge in self.challenges():
                self.send_header("WWW-Authenticate", challenge)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": self.server.root, "GIT_HTTP_EXPORT_ALL": "1",
               "GATEWAY_INTERFACE": "CGI/1.1", "SERVER_PROTOCOL": "HTTP/1.0", "REQUEST_METHOD": self.command,
               "PATH_INFO": path, "QUERY_STRING": query, "REMOTE_USER": "user", "REMOTE_ADDR": "127.0.0.1",
               "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
               "GIT_CONFIG_NOSYSTEM": "1", "HOME": self.server.root}
        for h in ("Content-Encoding", "Git-Protocol"):
            if self.headers.get(h):
                env["HTTP_" + h.upper().replace("-", "_")] = self.headers[h]
        out = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=env, timeout=60).stdout
        head, _, payload = out.partition(b"\r\n\r\n") if b"\r\n\r\n" in out else out.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode().splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def serve_repository(test, handler=None, validate=None):
    """Starts the local HTTPS git server for `test` (a GitTestCase): a bare `repo.git` with one
    commit under `server.root`, served by `handler` (default `_GitHTTPHandler`) admitting tokens
    `validate` accepts (default: the emulator's); stopped at cleanup. Returns (server, seed
    working tree)."""
    root = os.path.join(test.tmp, "srv")
    os.makedirs(root)
    work = os.path.join(test.tmp, "seed")
    ident = ["-c", "user.name=Test", "-c", "user.email=test@example.test"]
    subprocess.run(["git", "init", "-q", "-b", "main", work], check=True, env=test.git_env())
    with open(os.path.join(work, "README"), "w") as f:
        f.write("hello from the test server\n")
    subprocess.run(["git", "-C", work, "add", "README"], check=True, env=test.git_env())
    subprocess.run(["git", *ident, "-C", work, "commit", "-q", "-m", "first"], check=True, env=test.git_env())
    subprocess.run(["git", "clone", "-q", "--bare", work, os.path.join(root, "repo.git")],
                   check=True, env=test.git_env())
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler or _GitHTTPHandler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert_dir = os.path.dirname(test.ca_file)
    ctx.load_cert_chain(os.path.join(cert_dir, "server.pem"), os.path.join(cert_dir, "server.key"))
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.root, server.seen, server.validate = root, [], validate or test.emu.validate_access_token
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    test.addCleanup(server.server_close)
    test.addCleanup(server.shutdown)
    return server, work


class GitServerTestCase(GitTestCase):
    """GitTestCase plus the local HTTPS git server: `self.url` (https://127.0.0.1:PORT/repo.git)
    serves a bare repository with one commit; `self.server.seen` lists each request's
    Authorization scheme (None without one); `[host 127.0.0.1:PORT]` binds the server to `work`."""

    def setUp(self):
        super().setUp()
        self.server, self.seed = serve_repository(self)
        self.host = "127.0.0.1:%d" % self.server.server_address[1]
        self.url = f"https://{self.host}/repo.git"
        self.write_config(self.default_config() + f"\n[host {self.host}]\naccount = work\n")

    def push_commit(self, name, text):
        """Adds a commit with file `name` to the served repository (pushed over the file system)."""
        with open(os.path.join(self.seed, name), "w") as f:
            f.write(text)
        ident = ["-c", "user.name=Test", "-c", "user.email=test@example.test"]
        subprocess.run(["git", "-C", self.seed, "add", name], check=True, env=self.git_env())
        subprocess.run(["git", *ident, "-C", self.seed, "commit", "-q", "-m", name], check=True, env=self.git_env())
        subprocess.run(["git", "-C", self.seed, "push", "-q", os.path.join(self.server.root, "repo.git"), "main"],
                       check=True, env=self.git_env())


class GitCloneTest(GitServerTestCase):
    """A real `git clone` / `git ls-remote` over HTTPS against a tiny local git server."""

    def test_clone_succeeds_with_helper_and_fails_without(self):
        """The main job: git clones over HTTPS with the broker's token (Basic, password = the
        access token); without the helper the same clone fails cleanly."""
        self.signed_in()
        dest = os.path.join(self.tmp, "without")
        self.set_helpers()
        r = self.git("clone", "-q", self.url, dest, GIT_SSL_CAINFO=self.ca_file)
        self.assertNotEqual(r.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(dest, "README")))
        self.assertIn(b"could not read Username", r.stderr)

        self.set_helpers("", TOKENBROKER)
        dest = os.path.join(self.tmp, "with")
        r = self.git("clone", "-q", self.url, dest, GIT_SSL_CAINFO=self.ca_file)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(dest, "README")) as f:
            self.assertEqual(f.read(), "hello from the test server\n")
        self.assertIn("Basic", self.server.seen)

        self.set_helpers("", "tokenbroker")
        r = self.git("-c", "http.sslCAInfo=" + self.ca_file, "ls-remote", self.url)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"refs/heads/main", r.stdout)

    def test_clone_fails_cleanly_when_not_signed_in(self):
        """B12 kin: not signed in, git gets nothing from the helper and fails without a prompt;
        the helper's one line names `tokenbroker login work`."""
        self.set_helpers("", "tokenbroker")
        r = self.git("clone", "-q", self.url, os.path.join(self.tmp, "c"), GIT_SSL_CAINFO=self.ca_file)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"tokenbroker login work", r.stderr)


if __name__ == "__main__":
    unittest.main()
