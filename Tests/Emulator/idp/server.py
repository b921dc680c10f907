"""The HTTP(S) server: a ThreadingHTTPServer on loopback that hands each request to the app."""

import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from .web import DROP, Request


class LoopbackServer(ThreadingHTTPServer):
    """Serves `app.handle(Request) -> Response | DROP` on 127.0.0.1, optionally over TLS.

    The TLS handshake runs in the connection's own thread, so a client that stalls it cannot
    block the others. Open connections are tracked so `close` can cut keep-alive clients off.
    """
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, app, port=0, ssl_context=None, verbose=False):
        self.app = app
        self.ssl_context = ssl_context
        self.verbose = verbose
        self.connections = set()
        self.connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def scheme(self):
        return "https" if self.ssl_context else "http"

    def finish_request(self, request, client_address):
        conn = request
        if self.ssl_context:
            request.settimeout(10)
            try:
                conn = self.ssl_context.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                return  # the client went away or did not speak TLS
            conn.settimeout(None)
        with self.connections_lock:
            self.connections.add(conn)
        try:
            self.RequestHandlerClass(conn, client_address, self)
        finally:
            with self.connections_lock:
                self.connections.discard(conn)
            if conn is not request:
                conn.close()

    def handle_error(self, request, client_address):
        """A client that hangs up mid-request is not news; tracebacks only with --verbose."""
        if self.verbose:
            super().handle_error(request, client_address)

    def close(self):
        """Stop serving and cut every open connection."""
        self.shutdown()
        self.server_close()
        with self.connections_lock:
            for conn in list(self.connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as libcurl and requests expect
    server_version = "idp-emulator"
    timeout = 120  # idle keep-alive connections are closed after this

    def version_string(self):
        return self.server_version

    def do_GET(self):
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_HEAD = do_PROPFIND = do_GET

    def _read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()  # the CRLF that ends a chunk
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers, blank line
                pass
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _dispatch(self):
        body = self._read_body()
        url = urlsplit(self.path)
        host = self.headers.get("Host") or f"127.0.0.1:{self.server.server_address[1]}"
        request = Request(
            method=self.command, path=url.path,
            query={k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()},
            headers={k.lower(): v for k, v in self.headers.items()}, body=body,
            base_url=f"{self.server.scheme}://{host}", t=self.server.app.elapsed())
        response = self.server.app.handle(request)
        if response is DROP:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def log_message(self, format, *args):
        if self.server.verbose:
            super().log_message(format, *args)
