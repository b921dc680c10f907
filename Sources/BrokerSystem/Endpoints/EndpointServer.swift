import BrokerCore
import Glibc
import Synchronization

/// The loopback HTTP server of one SDK credential endpoint (interface.md §9), on `PollServer`.
///
/// Binds 127.0.0.1 on a random port at once; `serve` answers until `stop()`. The server's thread
/// does every socket call without blocking: it accepts, checks each connection's peer uid
/// (`TCPPeerOwner`) before reading a byte and closes another user's connection unanswered, reads
/// the request head (at most 16 KiB, within 10 s; more is 431, slower is closed). Each whole head
/// is parsed in a task of its own, which refuses a malformed request or a foreign `Host` (DNS
/// rebinding) itself and hands every other request to `handler`, so a slow token fetch never
/// stalls other connections. A reply is written within 10 s, and every connection is closed
/// after one reply. It holds `maxConnections` at once, fewer than the descriptor limit allows
/// (`connectionLimit`).
public final class EndpointServer: Sendable {
  /// The port `IDENTITY_ENDPOINT` or `GCE_METADATA_HOST` names.
  public let port: Int
  let listening: Int32
  let server: PollServer
  /// Seconds a connection may take to send its request head, and to take its reply.
  static let headTimeout = 10.0
  static let writeTimeout = 10.0
  /// Connections open at once; a further one closes the one reading longest
  /// (`connectionLimit`, from this process's descriptor limit).
  let maxConnections: Int
  /// Headers on the replies the server gives itself (400, 431), as the protocol puts on all of
  /// its own (`Metadata-Flavor: Google`).
  let replyHeaders: [(name: String, value: String)]
  /// Told the uid of each connection the peer check refuses (set by `serve`).
  private let refused: Refused
  private let closed = Mutex(false)

  /// - Parameter headers: put on the replies the server gives itself (a malformed or oversized
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
    maxConnections = Self.connectionLimit(descriptors: rlim_t(DescriptorReserve.softLimit()))
    let uid = getuid()
    let refused = Refused()
    var options = PollServer.Options(
      listeners: opened.fds, purpose: "the SDK credential endpoint", maxRequestBytes: LoopbackWire.maxHead,
      frame: { LoopbackWire.frameHead($0, ended: $1) })
    // Another user's process is closed before a byte is read or written.
    options.admit = { fd, _ in
      let owner = TCPPeerOwner.uid(of: fd)
      guard owner == uid else {
        refused.tell(owner)
        return nil
      }
      return 0
    }
    options.readMilliseconds = Int(Self.headTimeout * 1000)
    options.writeMilliseconds = Int(Self.writeTimeout * 1000)
    options.maxConnections = maxConnections
    do {
      server = try PollServer(options)
    } catch {
      for fd in opened.fds { Glibc.close(fd) }
      throw error
    }
    listening = opened.fds[0]
    port = opened.port
    self.refused = refused
  }

  final class Refused: Sendable {
    let sink = Mutex<@Sendable (UInt32?) -> Void>({ _ in })
    func tell(_ uid: UInt32?) { sink.withLock { $0 }(uid) }
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
    server.stop(drain: false)
  }

  /// Answers requests until `stop()` or cancellation, then closes every socket.
  /// - Parameters:
  ///   - handler: the protocol's reply to one request (`AppServiceEndpoint`, `GoogleMetadataEndpoint`).
  ///   - refused: told the uid of each connection refused by the peer check (nil: unknown owner).
  /// - Throws: `SystemError.call` when the server's thread cannot start.
  public func serve(
    handler: @escaping @Sendable (LoopbackRequest) async -> EndpointReply,
    refused: @escaping @Sendable (UInt32?) -> Void = { _ in }
  ) async throws {
    defer { closeListening() }
    self.refused.sink.withLock { $0 = refused }
    let (server, headers, hosts) = (self.server, replyHeaders, allowedHosts)
    // An oversized head is answered on the server's thread; every other head is parsed once, in
    // the task that answers it.
    try server.start { _, read in
      guard case .tooLarge = read else { return nil }
      return EndpointReply.text(431, "Request Header Fields Too Large\n", headers: headers).wire(includeBody: true)
    }
    await withTaskCancellationHandler {
      for await (connection, read) in server.connections {
        guard case .request(let head) = read else {
          server.discard(connection)
          continue
        }
        Task {
          switch Self.admission(head, headers: headers, hosts: hosts) {
          case .refused(let bytes):
            await server.reply(connection, bytes)
          case .request(let request):
            let reply = await handler(request)
            await server.reply(connection, reply.wire(includeBody: request.method != "HEAD"))
          }
        }
      }
    } onCancel: {
      stop()
    }
    // The listening socket is closed only once the server's thread is done with it.
    await server.ended()
  }

  /// A whole request head as the protocol's handler gets it, or the 400 the server answers
  /// itself: a malformed head, or a `Host` that no client of `http://127.0.0.1:PORT` sends (DNS
  /// rebinding; `hosts`).
  enum Admission {
    case request(LoopbackRequest)
    case refused([UInt8])
  }

  static func admission(_ head: [UInt8], headers: [(name: String, value: String)], hosts: Set<String>) -> Admission {
    guard let request = LoopbackRequest.parse(head: head) else {
      return .refused(EndpointReply.text(400, "Bad Request\n", headers: headers).wire(includeBody: true))
    }
    if let host = request.host, !hosts.contains(host) {
      return .refused(EndpointReply.text(400, "Bad Request: unexpected Host\n", headers: headers).wire(includeBody: true))
    }
    return .request(request)
  }

  /// The `Host` values a client of `http://127.0.0.1:PORT` may send.
  var allowedHosts: Set<String> { ["127.0.0.1:\(port)", "localhost:\(port)"] }

  private func closeListening() {
    closed.withLock { done in
      guard !done else { return }
      done = true
      Glibc.close(listening)
    }
  }
}
