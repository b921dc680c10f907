import BrokerCore
import BrokerWire
import CBrokerShims
import Glibc

/// The poll loop of one `EndpointServer` (runs on its dedicated thread): every connection is
/// reading its head, waiting for its handler, or writing its reply; each has a deadline in the
/// first and last state.
struct EndpointLoop {
  let server: EndpointServer
  let handler: @Sendable (LoopbackRequest) async -> EndpointReply
  let refused: @Sendable (UInt32?) -> Void
  private var connections: [Int: Connection] = [:]
  private var nextID = 0
  private let uid = getuid()

  init(
    server: EndpointServer, handler: @escaping @Sendable (LoopbackRequest) async -> EndpointReply,
    refused: @escaping @Sendable (UInt32?) -> Void
  ) {
    self.server = server
    self.handler = handler
    self.refused = refused
  }

  private enum Phase {
    case reading([UInt8])
    case answering
    case writing([UInt8], offset: Int)
  }

  private struct Connection {
    let fd: Int32
    var phase: Phase
    var deadline: Double
  }

  mutating func run() throws {
    defer { for c in connections.values { Glibc.close(c.fd) } }
    while true {
      if server.shared.withLock({ $0.stopped }) { return }
      let now = MonotonicClock.seconds
      let next = connections.values.filter { !isAnswering($0) }.map(\.deadline).min() ?? now + 3600
      let ids = Array(connections.keys).filter { !isAnswering(connections[$0]!) }
      var fds = [
        pollfd(fd: server.wake.readEnd, events: Int16(POLLIN), revents: 0),
        pollfd(fd: server.listening, events: Int16(POLLIN), revents: 0),
      ]
      fds += ids.map { id in
        let c = connections[id]!
        if case .writing = c.phase { return pollfd(fd: c.fd, events: Int16(POLLOUT), revents: 0) }
        return pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)
      }
      let ready = poll(&fds, nfds_t(fds.count), Int32(max(1, min(next - now, 3600) * 1000)))
      if ready < 0 {
        if errno == EINTR { continue }
        throw SystemError.listener(
          what: "the SDK credential endpoint failed (\(String(cString: strerror(errno))))", remedy: "run the command again")
      }
      if fds[0].revents != 0 { takeOutbox() }
      for (i, id) in ids.enumerated() where fds[2 + i].revents != 0 { step(id) }
      let late = MonotonicClock.seconds
      for (id, c) in connections where !isAnswering(c) && c.deadline <= late { finish(id) }
      if fds[1].revents != 0 { acceptAll() }
    }
  }

  private func isAnswering(_ c: Connection) -> Bool {
    if case .answering = c.phase { return true }
    return false
  }

  private mutating func finish(_ id: Int) {
    guard let c = connections.removeValue(forKey: id) else { return }
    Glibc.close(c.fd)
  }

  private mutating func acceptAll() {
    while true {
      let fd = cbroker_accept_cloexec_nonblock(server.listening)
      if fd < 0 { return }
      // Another user's process is closed before a byte is read or written.
      let owner = TCPPeerOwner.uid(of: fd)
      guard owner == uid else {
        refused(owner)
        Glibc.close(fd)
        continue
      }
      if connections.count >= server.maxConnections {
        let reading = connections.compactMap { id, c -> (key: Int, deadline: Double)? in
          if case .reading = c.phase { return (id, c.deadline) } else { return nil }
        }
        guard let oldest = LoopbackWire.longestWaiting(reading) else {
          Glibc.close(fd)
          continue
        }
        finish(oldest)
      }
      nextID += 1
      connections[nextID] = Connection(fd: fd, phase: .reading([]), deadline: MonotonicClock.seconds + EndpointServer.headTimeout)
    }
  }

  /// Reads or writes what the socket of `id` is ready for.
  private mutating func step(_ id: Int) {
    guard var c = connections[id] else { return }
    switch c.phase {
    case .answering: return
    case .writing(let bytes, let offset):
      let n = bytes.withUnsafeBytes { Glibc.send(c.fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
      if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
      guard n > 0, offset + n < bytes.count else { return finish(id) }
      c.phase = .writing(bytes, offset: offset + n)
    case .reading(var buffer):
      switch LoopbackWire.readHead(c.fd, into: &buffer) {
      case .waiting: c.phase = .reading(buffer)
      case .closed: return finish(id)
      case .head(let head):
        c.phase = dispatch(id, head: head)
        if case .writing = c.phase { c.deadline = MonotonicClock.seconds + EndpointServer.writeTimeout }
      case .tooLarge:
        c.phase = .writing(EndpointReply.text(431, "Request Header Fields Too Large\n", headers: server.replyHeaders).wire(includeBody: true), offset: 0)
        c.deadline = MonotonicClock.seconds + EndpointServer.writeTimeout
      }
    }
    connections[id] = c
  }

  /// A malformed or foreign request is answered here; any other goes to the handler's task.
  private func dispatch(_ id: Int, head: [UInt8]) -> Phase {
    guard let request = LoopbackRequest.parse(head: head) else {
      return .writing(EndpointReply.text(400, "Bad Request\n", headers: server.replyHeaders).wire(includeBody: true), offset: 0)
    }
    if let host = request.host, !server.allowedHosts.contains(host) {
      return .writing(EndpointReply.text(400, "Bad Request: unexpected Host\n", headers: server.replyHeaders).wire(includeBody: true), offset: 0)
    }
    let (server, handler) = (self.server, self.handler)
    Task {
      let reply = await handler(request)
      server.post(id, reply.wire(includeBody: request.method != "HEAD"))
    }
    return .answering
  }

  /// Moves the replies handlers posted into their connections (drains the wake pipe first).
  private mutating func takeOutbox() {
    var byte = [UInt8](repeating: 0, count: 256)
    while byte.withUnsafeMutableBytes({ read(server.wake.readEnd, $0.baseAddress, $0.count) }) > 0 {}
    let posted = server.shared.withLock { s in
      defer { s.outbox = [] }
      return s.outbox
    }
    for (id, bytes) in posted where connections[id] != nil {
      connections[id]!.phase = .writing(bytes, offset: 0)
      connections[id]!.deadline = MonotonicClock.seconds + EndpointServer.writeTimeout
    }
  }
}
