import BrokerCore
import CBrokerShims
import Glibc
import Synchronization

/// The loopback HTTP server of one SDK credential endpoint (interface.md §9).
///
/// Binds 127.0.0.1 on a random port at once; `serve` answers until `stop()`. One poll loop on a
/// dedicated thread does every socket call without blocking: it accepts, checks each connection's
/// peer uid (`TCPPeerOwner`) before reading a byte and closes another user's connection unanswered,
/// reads the request head (at most 16 KiB, within 10 s; more is 431, slower is closed), refuses a
/// foreign `Host` (DNS rebinding), and hands each request to `handler` in a task of its own, so a
/// slow token fetch never stalls other connections. Replies go back through the loop (an outbox
/// and the wake pipe) and are written within 10 s; every connection is closed after one reply.
/// It holds `maxConnections` at once, fewer than the descriptor limit allows (`connectionLimit`).
public final class EndpointServer: Sendable {
  /// The port `IDENTITY_ENDPOINT` or `GCE_METADATA_HOST` names.
  public let port: Int
  let listening: Int32
  let wake: WakePipe
  let shared = Mutex(Shared())
  /// Seconds a connection may take to send its request head, and to take its reply.
  static let headTimeout = 10.0
  static let writeTimeout = 10.0
  /// Connections open at once; a further one closes the one reading longest
  /// (`connectionLimit`, from this process's descriptor limit).
  let maxConnections: Int
  /// Headers on the replies the loop gives itself (400, 431), as the protocol puts on all of its
  /// own (`Metadata-Flavor: Google`).
  let replyHeaders: [(name: String, value: String)]

  struct Shared {
    var stopped = false
    var closed = false
    /// Replies ready to be written: connection id, bytes.
    var outbox: [(id: Int, bytes: [UInt8])] = []
  }

  /// - Parameter headers: put on the replies the socket loop gives itself (a malformed or oversized
  ///   request, a foreign `Host`), as the protocol's handler puts them on its own.
  /// - Throws: `SystemError.listener` (no loopback), `.call` (no pipe).
  public init(headers: [(name: String, value: String)] = []) throws(SystemError) {
    replyHeaders = headers
    let opened: (fds: [Int32], port: Int)
    do {
      opened = try LoopbackSockets.open(port: nil, ipv6: false, backlog: 512)
    } catch {
      throw SystemError.listener(
        what: "cannot listen on 127.0.0.1 for the SDK credential endpoints", remedy: "check that the loopback interface is up")
    }
    do {
      wake = try WakePipe()
    } catch {
      for fd in opened.fds { Glibc.close(fd) }
      throw error
    }
    listening = opened.fds[0]
    port = opened.port
    var limit = rlimit()
    let known = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0
    maxConnections = Self.connectionLimit(descriptors: known ? limit.rlim_cur : 1024)
  }

  /// How many connections one endpoint holds when the process may open `descriptors` files:
  /// 512 at most, and at most half of what is left after 64 for everything else (the other
  /// endpoint, the agent's socket, the store, libcurl, `/proc/net/tcp` for the peer check), so
  /// idle clients never leave a request's token fetch without a descriptor; 8 at least.
  static func connectionLimit(descriptors: rlim_t) -> Int {
    let spare = descriptors > 64 ? (descriptors - 64) / 2 : 0
    return max(8, Int(min(spare, 512)))
  }

  deinit { closeListening() }

  /// Ends `serve` (it returns) and closes every socket; replies still being computed are dropped.
  public func stop() {
    shared.withLock { $0.stopped = true }
    wake.signal()
  }

  /// Answers requests until `stop()` or cancellation, then closes every socket.
  /// - Parameters:
  ///   - handler: the protocol's reply to one request (`AppServiceEndpoint`, `GoogleMetadataEndpoint`).
  ///   - refused: told the uid of each connection refused by the peer check (nil: unknown owner).
  /// - Throws: `SystemError.listener` when `poll` fails.
  public func serve(
    handler: @escaping @Sendable (LoopbackRequest) async -> EndpointReply,
    refused: @escaping @Sendable (UInt32?) -> Void = { _ in }
  ) async throws {
    try await withTaskCancellationHandler {
      try await DedicatedThread.run { [self] in
        defer { closeListening() }
        var loop = EndpointLoop(server: self, handler: handler, refused: refused)
        try loop.run()
      }
    } onCancel: {
      stop()
    }
  }

  /// Queues a reply for connection `id` and wakes the loop (from a handler's task).
  func post(_ id: Int, _ bytes: [UInt8]) {
    let posted = shared.withLock { s -> Bool in
      guard !s.stopped else { return false }
      s.outbox.append((id, bytes))
      return true
    }
    if posted { wake.signal() }
  }

  /// The `Host` values a client of `http://127.0.0.1:PORT` may send.
  var allowedHosts: Set<String> { ["127.0.0.1:\(port)", "localhost:\(port)"] }

  private func closeListening() {
    shared.withLock { s in
      guard !s.closed else { return }
      s.closed = true
      s.stopped = true
      Glibc.close(listening)
    }
  }
}
