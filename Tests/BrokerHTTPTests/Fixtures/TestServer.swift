import Foundation

/// Local servers for the transport tests, from one Python 3 (standard library) subprocess started
/// once per test process: HTTPS with a server certificate from a CA made with `openssl` at start,
/// plain HTTP, a port that accepts connections and never answers, and a port nothing listens on.
/// The subprocess exits, removing its directory, when this process does (it polls its parent pid).
struct TestServer: Sendable {
  var https: Int
  var http: Int
  var silent: Int
  var dead: Int
  /// The test CA (PEM) that signed the HTTPS server's certificate for 127.0.0.1 and localhost.
  var caFile: String
  var directory: String

  static let shared: Result<TestServer, TestServerError> = start()

  static func get() throws -> TestServer { try shared.get() }

  private static func start() -> Result<TestServer, TestServerError> {
    let dir = FileManager.default.temporaryDirectory
      .appendingPathComponent("tokenbroker-http-tests-\(UUID().uuidString)").path
    do {
      try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
      let script = dir + "/server.py"
      try serverScript.write(toFile: script, atomically: true, encoding: .utf8)
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
      process.arguments = [script, dir]
      let out = Pipe()
      process.standardOutput = out
      process.standardError = FileHandle.nullDevice
      process.standardInput = FileHandle.nullDevice
      try process.run()
      // The first line is the ports as JSON, printed once the servers listen.
      var line = Data()
      while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
        line += byte
      }
      let ports = try JSONDecoder().decode([String: Int].self, from: line)
      guard let https = ports["https"], let http = ports["http"], let silent = ports["silent"],
        let dead = ports["dead"]
      else { return .failure(TestServerError(text: "bad ports line")) }
      return .success(
        TestServer(
          https: https, http: http, silent: silent, dead: dead, caFile: dir + "/ca.pem", directory: dir))
    } catch {
      return .failure(TestServerError(text: "cannot start the Python test server: \(error)"))
    }
  }
}

struct TestServerError: Error, CustomStringConvertible {
  var text: String
  var description: String { text }
}

private let serverScript = #"""
import http.server, json, os, shutil, socket, ssl, subprocess, sys, threading, time

work = sys.argv[1]
def path(name): return os.path.join(work, name)
def openssl(*args): subprocess.run(["openssl", *args], check=True, capture_output=True)
ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
openssl("req", "-x509", *ec, "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2",
        "-subj", "/CN=tokenbroker test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
openssl("req", *ec, "-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=localhost")
with open(path("server.ext"), "w") as f:
    f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n")
openssl("x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
        "-CAcreateserial", "-out", path("server.pem"), "-days", "2", "-extfile", path("server.ext"))

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers: self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD": self.wfile.write(body)

    def do_GET(self):
        route = self.path.split("?")[0]
        if route == "/json":
            self.reply(200, b'{"ok":true}', [("Content-Type", "application/json"),
                                             ("X-Test", "one"), ("X-Test", "two")])
        elif route == "/unavailable":
            self.reply(503, b"busy", [("Retry-After", "7")])
        elif route == "/headers":
            seen = [[k.lower(), v] for k, v in self.headers.items()]
            self.reply(200, json.dumps(seen).encode(), [("Content-Type", "application/json")])
        elif route == "/together":
            # Held until 20 requests are here at once: 200 if they met, 504 after 60 s if they
            # never did (a transport that sends one at a time).
            try:
                together.wait(60)
                self.reply(200, b"together")
            except threading.BrokenBarrierError:
                self.reply(504, b"alone")
        elif route == "/big":
            self.reply(200, b"x" * (5 * 1024 * 1024))
        elif route == "/redirect":
            self.reply(302, b"", [("Location", "/json")])
        elif route == "/interim":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n")
            self.reply(200, b"final", [("X-Final", "yes")])
        else:
            self.reply(404, b"not found")
    do_HEAD = do_GET

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.reply(200, body, [("X-Method", self.command),
                               ("X-Content-Type", self.headers.get("Content-Type", ""))])
    do_PUT = do_POST

together = threading.Barrier(20)

class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    tls = None
    def finish_request(self, request, client_address):
        # The TLS handshake runs on the request's thread, not the accept loop.
        if self.tls: request = self.tls.wrap_socket(request, server_side=True)
        super().finish_request(request, client_address)
    def handle_error(self, request, client_address): pass

plain = Server(("127.0.0.1", 0), Handler)
secure = Server(("127.0.0.1", 0), Handler)
secure.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
secure.tls.load_cert_chain(path("server.pem"), path("server.key"))
silent = socket.socket()
silent.bind(("127.0.0.1", 0))
silent.listen(64)
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
dead = probe.getsockname()[1]
probe.close()
for server in (plain, secure):
    threading.Thread(target=server.serve_forever, daemon=True).start()
print(json.dumps({"https": secure.server_address[1], "http": plain.server_address[1],
                  "silent": silent.getsockname()[1], "dead": dead}), flush=True)
parent = os.getppid()
while os.getppid() == parent: time.sleep(0.5)
shutil.rmtree(work, ignore_errors=True)
"""#
