import BrokerCore
import BrokerWire
import CBrokerShims
import Glibc
import Synchronization

/// How a wait for the redirect ended.
public enum LoopbackOutcome<Result: Sendable>: Sendable {
  /// A request's reply carried a result; the listener is closed.
  case finished(Result)
  /// The deadline passed first.
  case timedOut
}

/// A one-shot HTTP listener for the OAuth loopback redirect (RFC 8252 §7.3).
///
/// Binds 127.0.0.1 (and ::1 on the same port when asked, unless the system has no IPv6 loopback)
/// at once, so the redirect URI
/// can name the port; `serve` then answers requests until one reply carries a result, the deadline
/// passes, or the task is cancelled, and closes every socket. Requests are read concurrently (a
/// browser's idle preconnection never delays the real redirect), each bounded to 16 KiB and 10 s.
/// All blocking calls run on a dedicated thread.
public final class LoopbackListener: Sendable {
  /// The port the redirect URI must name.
  public let port: Int
  /// True when ::1 is served too (same port).
  public let servesIPv6: Bool
  private let sockets: [Int32]
  private let wake: WakePipe
  private let closed = Mutex(false)
  /// Seconds one connection may take to send its request head.
  static let connectionTimeout = 10.0
  /// Connections read at the same time; a further one closes the one waiting longest.
  static let maxConnections = 32

  /// - Parameters:
  ///   - port: `redirect-port`, or nil for a random free port.
  ///   - ipv6: also listen on ::1 (Azure's `localhost` redirect may resolve there).
  /// - Throws: `SystemError.redirectPortTaken` (the fixed port is in use on 127.0.0.1, or on ::1
  ///   with `ipv6`), `.listener` (no loopback, no random port free on both), `.call` (no pipe).
  public init(port: Int?, ipv6: Bool) throws(SystemError) {
    let opened = try LoopbackSockets.open(port: port, ipv6: ipv6)
    do {
      wake = try WakePipe()
    } catch {
      for fd in opened.fds { Glibc.close(fd) }
      throw error
    }
    sockets = opened.fds
    self.port = opened.port
    servesIPv6 = opened.fds.count > 1
  }

  deinit { closeSockets() }

  /// Ends a running `serve` (it throws `CancellationError`); also closes an unused listener.
  public func stop() {
    wake.signal()
  }

  /// Answers requests with `handler` (called on the listener's thread, one request at a time)
  /// until a reply carries a result or `timeout` seconds pass; then closes every socket.
  /// - Throws: `CancellationError` when stopped or the task is cancelled; `SystemError.listener`
  ///   when `poll` fails.
  public func serve<Result: Sendable>(
    timeout: Double, handler: @escaping @Sendable (LoopbackRequest) -> LoopbackReply<Result>
  ) async throws -> LoopbackOutcome<Result> {
    try await withTaskCancellationHandler {
      try await DedicatedThread.run { [self] in
        defer { closeSockets() }
        return try loop(until: MonotonicClock.seconds + timeout, handler: handler)
      }
    } onCancel: {
      stop()
    }
  }

  private func closeSockets() {
    closed.withLock { done in
      guard !done else { return }
      done = true
      for fd in sockets { Glibc.close(fd) }
    }
  }

  private struct Connection {
    let fd: Int32
    let deadline: Double
    var buffer: [UInt8] = []
  }

  private func loop<Result: Sendable>(
    until end: Double, handler: (LoopbackRequest) -> LoopbackReply<Result>
  ) throws -> LoopbackOutcome<Result> {
    var connections: [Connection] = []
    defer { for c in connections { Glibc.close(c.fd) } }
    while true {
      let now = MonotonicClock.seconds
      if now >= end { return .timedOut }
      let nextDeadline = connections.map(\.deadline).min() ?? end
      let wait = Int32(max(1, min(min(end, nextDeadline) - now, 3600) * 1000))
      var fds = [pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
      fds += sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      fds += connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
      let ready = poll(&fds, nfds_t(fds.count), wait)
      if ready < 0 {
        if errno == EINTR { continue }
        throw SystemError.listener(
          what: "the sign-in redirect listener failed (\(String(cString: strerror(errno))))", remedy: "try again")
      }
      if fds[0].revents != 0 { throw CancellationError() }
      let base = 1 + sockets.count
      var done: [Int32] = []
      for i in 0..<(fds.count - base) where fds[base + i].revents != 0 {
        var c = connections[i]
        switch LoopbackWire.readHead(c.fd, into: &c.buffer) {
        case .waiting: connections[i] = c
        case .closed: done.append(c.fd)
        case .tooLarge:
          LoopbackWire.send(LoopbackWire.response(status: 431, page: LoopbackPage.notFound), to: c.fd)
          done.append(c.fd)
        case .head(let head):
          done.append(c.fd)
          if let result = answer(head, on: c.fd, handler: handler) { return .finished(result) }
        }
      }
      let late = MonotonicClock.seconds
      done += connections.filter { $0.deadline <= late }.map(\.fd)
      for fd in Set(done) { Glibc.close(fd) }
      connections.removeAll { done.contains($0.fd) || $0.deadline <= late }
      // After the reads: `fds` and `connections` matched index for index until here.
      for (i, fd) in sockets.enumerated() where fds[1 + i].revents != 0 {
        acceptAll(fd, into: &connections)
      }
    }
  }

  private func acceptAll(_ listening: Int32, into connections: inout [Connection]) {
    while true {
      let fd = cbroker_accept_cloexec_nonblock(listening)
      if fd < 0 { return }  // EAGAIN: none left (or the peer gave up)
      // Full: the connection waiting longest makes room (a browser sends its redirect at once).
      if connections.count >= Self.maxConnections,
        let oldest = LoopbackWire.longestWaiting(connections.indices.map { (key: $0, deadline: connections[$0].deadline) })
      {
        Glibc.close(connections[oldest].fd)
        connections.remove(at: oldest)
      }
      connections.append(Connection(fd: fd, deadline: MonotonicClock.seconds + Self.connectionTimeout))
    }
  }

  /// `Host` values a browser sends for our redirect URIs (without the port when it is 80).
  private var allowedHosts: Set<String> {
    let names = ["localhost", "127.0.0.1", "[::1]"]
    return Set(names.map { "\($0):\(port)" } + (port == 80 ? names : []))
  }


  /// Answers one request head; returns the handler's result when it ends the wait.
  private func answer<Result: Sendable>(
    _ head: [UInt8], on fd: Int32, handler: (LoopbackRequest) -> LoopbackReply<Result>
  ) -> Result? {
    guard let request = LoopbackRequest.parse(head: head) else {
      LoopbackWire.send(LoopbackWire.response(status: 400, page: LoopbackPage.notFound), to: fd)
      return nil
    }
    // DNS rebinding: a page that resolved its own name to 127.0.0.1 still sends its own Host.
    if let host = request.host, !allowedHosts.contains(host) {
      LoopbackWire.send(LoopbackWire.response(status: 400, page: LoopbackPage.notFound), to: fd)
      return nil
    }
    let reply = handler(request)
    LoopbackWire.send(
      LoopbackWire.response(status: reply.status, page: reply.page, includeBody: request.method != "HEAD"), to: fd)
    return reply.result
  }
}
