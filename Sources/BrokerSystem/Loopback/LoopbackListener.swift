import BrokerCore
import Glibc
import Synchronization

/// How a wait for the redirect ended.
public enum LoopbackOutcome<Result: Sendable>: Sendable {
  /// A request's reply carried a result; the listener is closed.
  case finished(Result)
  /// The deadline passed first.
  case timedOut
}

/// A one-shot HTTP listener for the OAuth loopback redirect (RFC 8252 §7.3), on `PollServer`.
///
/// Binds 127.0.0.1 (and ::1 on the same port when asked, unless the system has no IPv6 loopback)
/// at once, so the redirect URI can name the port; `serve` then answers requests until one reply
/// carries a result, the deadline passes, or the task is cancelled, and closes every socket.
/// Requests are read concurrently (a browser's idle preconnection never delays the real
/// redirect), each head bounded to 16 KiB (more is 431) and 10 s (slower is closed); at most
/// `maxConnections` are read at once, a further one closes the one waiting longest. A malformed
/// request or a foreign `Host` (DNS rebinding) is answered 400 without the handler.
public final class LoopbackListener: Sendable {
  /// The port the redirect URI must name.
  public let port: Int
  /// True when ::1 is served too (same port).
  public let servesIPv6: Bool
  private let sockets: [Int32]
  let server: PollServer
  private let closed = Mutex(false)
  /// Set by `stop()`: a `serve` that ends without a result throws `CancellationError`.
  private let stopped = Mutex(false)
  /// Milliseconds one connection may take to send its request head, and to take its page.
  static let readMilliseconds = 10_000
  static let writeMilliseconds = 2_000
  /// Connections read at the same time; a further one closes the one waiting longest.
  static let maxConnections = 32

  /// - Parameters:
  ///   - port: `redirect-port`, or nil for a random free port.
  ///   - ipv6: also listen on ::1 (Azure's `localhost` redirect may resolve there).
  /// - Throws: `SystemError.redirectPortTaken` (the fixed port is in use on 127.0.0.1, or on ::1
  ///   with `ipv6`), `.listener` (no loopback, no random port free on both), `.call` (no pipe).
  public init(port: Int?, ipv6: Bool) throws(SystemError) {
    let opened = try LoopbackSockets.open(port: port, ipv6: ipv6)
    var options = PollServer.Options(
      listeners: opened.fds, purpose: "the sign-in redirect listener", maxRequestBytes: LoopbackWire.maxHead,
      frame: { LoopbackWire.frameHead($0, ended: $1) })
    options.readMilliseconds = Self.readMilliseconds
    options.writeMilliseconds = Self.writeMilliseconds
    options.maxConnections = Self.maxConnections
    do {
      server = try PollServer(options)
    } catch {
      for fd in opened.fds { Glibc.close(fd) }
      throw error
    }
    sockets = opened.fds
    self.port = opened.port
    servesIPv6 = opened.fds.count > 1
  }

  deinit { closeSockets() }

  /// Ends a running `serve` (it throws `CancellationError`, unless a result came first); a
  /// listener stopped before `serve` serves nothing.
  public func stop() {
    stopped.withLock { $0 = true }
    server.stop(drain: false)
  }

  /// Answers requests with `handler` (called on the listener's thread, one request at a time)
  /// until a reply carries a result or `timeout` seconds pass; then closes every socket. Once
  /// `serve` has returned, the listener serves nothing more.
  /// - Throws: `CancellationError` when stopped or the task is cancelled; `SystemError.call` when
  ///   the listener's thread cannot start.
  public func serve<Result: Sendable>(
    timeout: Double, handler: @escaping @Sendable (LoopbackRequest) -> LoopbackReply<Result>
  ) async throws -> LoopbackOutcome<Result> {
    defer { closeSockets() }
    let found = Found<Result>()
    let (server, hosts) = (self.server, allowedHosts)
    try server.start { _, read in
      Self.answer(read, hosts: hosts, handler: handler, found: found, server: server)
    }
    await withTaskCancellationHandler {
      await withTaskGroup(of: Void.self) { group in
        group.addTask {
          try? await Task.sleep(for: .milliseconds(Int(max(0, timeout) * 1000)))
          guard !Task.isCancelled else { return }
          found.timedOut.withLock { $0 = true }
          server.stop(drain: false)
        }
        group.addTask { await server.ended() }
        await group.next()
        group.cancelAll()
      }
    } onCancel: {
      stop()
    }
    if let result = found.value.withLock({ $0 }) { return .finished(result) }
    if found.timedOut.withLock({ $0 }) && !stopped.withLock({ $0 }) { return .timedOut }
    throw CancellationError()
  }

  /// How one `serve` ended: the first result a reply carried, or the deadline.
  private final class Found<Result: Sendable>: Sendable {
    let value = Mutex<Result?>(nil)
    let timedOut = Mutex(false)
  }

  /// The reply to one read, on the listener's thread: 431 for an oversized head, 400 for a
  /// malformed one or a foreign `Host` (DNS rebinding: a page that resolved its own name to
  /// 127.0.0.1 still sends its own `Host`), else the handler's page; nothing (the connection is
  /// closed) for a read that ended without a request, or once a result was found.
  private static func answer<Result: Sendable>(
    _ read: PollRead, hosts: Set<String>, handler: (LoopbackRequest) -> LoopbackReply<Result>, found: Found<Result>,
    server: PollServer
  ) -> [UInt8] {
    guard found.value.withLock({ $0 == nil }) else { return [] }
    switch read {
    case .tooLarge: return LoopbackWire.response(status: 431, page: LoopbackPage.notFound)
    case .request(let head):
      guard let request = LoopbackRequest.parse(head: head), request.host.map(hosts.contains) ?? true else {
        return LoopbackWire.response(status: 400, page: LoopbackPage.notFound)
      }
      let reply = handler(request)
      if let result = reply.result {
        found.value.withLock { $0 = result }
        server.stopReading()
      }
      return LoopbackWire.response(status: reply.status, page: reply.page, includeBody: request.method != "HEAD")
    case .timedOut, .closed, .failed: return []
    }
  }

  /// `Host` values a browser sends for our redirect URIs (without the port when it is 80).
  private var allowedHosts: Set<String> {
    let names = ["localhost", "127.0.0.1", "[::1]"]
    return Set(names.map { "\($0):\(port)" } + (port == 80 ? names : []))
  }

  /// Closes the listening sockets once the server's thread is done with them (or never ran).
  private func closeSockets() {
    closed.withLock { done in
      guard !done else { return }
      done = true
      for fd in sockets { Glibc.close(fd) }
    }
  }
}
