import BrokerAgent
import BrokerWire
import Glibc

/// A private temporary directory (0700), removed by `remove()`.
struct TempDirectory {
  let path: String
  init() { path = String(cString: mkdtemp(strdup("/tmp/tb-agent-test-XXXXXX"))) }
  func remove() { _ = system("rm -rf '\(path)'") }
}

/// An endpoint whose socket lives in the runtime directory under `base`.
func endpoint(in base: String) -> AgentEndpoint {
  AgentEndpoint(environment: { $0 == "XDG_RUNTIME_DIR" ? base : nil }, uid: getuid())
}

/// A listener on a socket in a new private runtime directory (the caller closes the one and
/// removes the other).
func privateListener() throws -> (TempDirectory, AgentListener) {
  let dir = TempDirectory()
  do {
    return (dir, try AgentListener.open(endpoint: endpoint(in: dir.path), environment: [:]))
  } catch {
    dir.remove()
    throw error
  }
}

/// A server on `listener` answering with `handler`, run in a background task.
func serve(
  _ listener: AgentListener, expectedUID: UInt32 = getuid(), idle: Int = 60,
  quick: @escaping AgentServer.QuickHandler = { _ in nil }, handler: @escaping AgentServer.Handler
) throws -> (AgentServer, Task<Void, any Error>) {
  let server = try AgentServer(listenFD: listener.fd, expectedUID: expectedUID, idleTimeout: idle, log: { _ in })
  let task = Task { try await server.run(quick: quick, handler: handler) }
  return (server, task)
}

/// One request over a fresh connection, off the cooperative pool.
func exchange(_ socket: String, _ request: [UInt8]) async -> AgentClient.Exchange {
  await withCheckedContinuation { continuation in
    Thread0.run {
      guard case .connected(let fd) = AgentClient.connect(to: socket) else { return continuation.resume(returning: .failed(-1)) }
      defer { close(fd) }
      continuation.resume(returning: AgentClient.exchange(fd: fd, request: request, timeoutMilliseconds: 30_000))
    }
  }
}

/// Runs a blocking body on a new thread.
enum Thread0 {
  final class Box: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
  static func run(_ body: @escaping @Sendable () -> Void) {
    let raw = Unmanaged.passRetained(Box(body)).toOpaque()
    var t = pthread_t()
    pthread_create(&t, nil, { p in
      Unmanaged<Box>.fromOpaque(p!).takeRetainedValue().body()
      return nil
    }, raw)
    pthread_detach(t)
  }
}
