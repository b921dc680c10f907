import BrokerBasics
import Glibc

/// The client side of the agent socket: connect, send one request, read the reply (Glibc only,
/// blocking calls bounded by `poll`; for the front and for short notices from tokenbroker-core).
public enum AgentClient {
  /// The outcome of `connect(to:)`.
  public enum Connection: Sendable, Equatable {
    /// Connected: the descriptor (close-on-exec), owned by the caller.
    case connected(Int32)
    /// No agent listens there (`ENOENT`, `ECONNREFUSED`): one may be started.
    case absent
    /// Any other failure (errno; `EPERM`: the socket's server runs as another user); the agent
    /// cannot be used.
    case failed(Int32)
  }

  /// The outcome of `exchange(fd:request:timeoutMilliseconds:)`.
  public enum Exchange: Sendable, Equatable {
    /// The reply's bytes (at most `AgentProtocol.maxMessageBytes + 1`).
    case reply([UInt8])
    /// The agent closed the connection without a byte of reply (it stopped or died).
    case closed
    /// No complete reply within the bound.
    case timedOut
    /// A send or receive error (errno).
    case failed(Int32)
  }

  /// Connects to the Unix socket at `path`, and only to a server of this process's real uid:
  /// the kernel's record of who listens (`SO_PEERCRED`) is checked before a byte is sent, so a
  /// socket planted by someone else is never talked to, whatever its directory looks like.
  public static func connect(to path: String) -> Connection {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity else { return .failed(ENAMETOOLONG) }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    var fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return .failed(errno) }
    // Started with standard input, output or error closed, the socket would take that number:
    // the request's input read from the socket, the reply's output and errors written into it.
    // It moves up instead; the closed stream stays closed, as it is for tokenbroker-core.
    if fd <= 2 {
      let moved = fcntl(fd, F_DUPFD_CLOEXEC, Int32(3))
      let error = errno
      close(fd)
      guard moved >= 0 else { return .failed(error) }
      fd = moved
    }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
    let rc = retryingOnInterrupt {
      withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
      }
    }
    if rc == 0 {
      if serverUID(fd) == getuid() { return .connected(fd) }
      close(fd)
      return .failed(EPERM)
    }
    let error = errno
    close(fd)
    return error == ENOENT || error == ECONNREFUSED ? .absent : .failed(error)
  }

  /// Writes `request`, shuts down the writing side, and reads the reply until the agent closes.
  /// Does not close `fd`.
  /// - Parameter timeoutMilliseconds: the bound for the whole exchange.
  public static func exchange(fd: Int32, request: [UInt8], timeoutMilliseconds: Int) -> Exchange {
    let deadline = MonotonicClock.milliseconds + timeoutMilliseconds
    // Non-blocking sends and receives, with a `poll` (bounded by the deadline) only when one
    // would block: a request fits the socket's buffer, and once `poll` saw the agent hang up,
    // what is left arrives without waiting: a warm call makes one send and one poll, not two of each.
    if timeoutMilliseconds <= 0 { return .timedOut }  // no time at all: nothing is sent
    var offset = 0
    while offset < request.count {
      let n = retryingOnInterrupt {
        request.withUnsafeBytes {
          Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
      }
      if n < 0 {
        if errno == EAGAIN {
          guard wait(fd, for: Int16(POLLOUT), until: deadline) else { return .timedOut }
          continue
        }
        return errno == EPIPE || errno == ECONNRESET ? .closed : .failed(errno)
      }
      offset += n
    }
    shutdown(fd, Int32(SHUT_WR))
    var reply: [UInt8] = []
    // A stack buffer, not a zeroed array: zeroing touches (faults in) all its pages, on every call
    // of the front, for a reply of a few hundred bytes.
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16384) { chunk in
      var hungUp = false  // the agent closed its side: every next receive returns at once
      while true {
        if !hungUp {
          guard let events = waitEvents(fd, for: Int16(POLLIN), until: deadline) else { return .timedOut }
          hungUp = events & Int16(POLLHUP) != 0
        }
        let n = retryingOnInterrupt { recv(fd, chunk.baseAddress, chunk.count, Int32(MSG_DONTWAIT)) }
        if n < 0 {
          if errno == EAGAIN {
            hungUp = false  // never a busy loop: poll again
            continue
          }
          if errno == ECONNRESET && reply.isEmpty { return .closed }
          return .failed(errno)
        }
        if n == 0 { return reply.isEmpty ? .closed : .reply(reply) }
        reply.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[0..<n]))
        if reply.count > AgentProtocol.maxMessageBytes { return .reply(reply) }
      }
    }
  }

  /// Connects, sends `request` and decodes the reply; nil when no agent answers or the reply is
  /// malformed. For notices (`drop`, `status`, `stop`) where a missing agent is no error.
  public static func send(_ request: AgentRequest, to path: String, timeoutMilliseconds: Int) -> AgentReply? {
    guard let bytes = try? request.encoded(), case .connected(let fd) = connect(to: path) else { return nil }
    defer { close(fd) }
    guard case .reply(let reply) = exchange(fd: fd, request: bytes, timeoutMilliseconds: timeoutMilliseconds) else {
      return nil
    }
    return try? AgentReply.decode(reply)
  }

  /// The uid of the process that listens on the other end of the connected `fd`, or nil.
  static func serverUID(_ fd: Int32) -> UInt32? {
    // struct ucred (pid, uid, gid); Swift's Glibc module leaves the GNU type out.
    var credentials = (pid: Int32(0), uid: UInt32(0), gid: UInt32(0))
    var length = socklen_t(MemoryLayout.size(ofValue: credentials))
    guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
      length == socklen_t(MemoryLayout.size(ofValue: credentials))
    else { return nil }
    return credentials.uid
  }

  /// Polls `fd` for `events` until `deadline` (monotonic ms); true when ready (or in error: the
  /// next call reports it).
  static func wait(_ fd: Int32, for events: Int16, until deadline: Int) -> Bool {
    waitEvents(fd, for: events, until: deadline) != nil
  }

  /// As `wait`, with the events `poll` reported (POLLERR when `poll` itself failed); nil past
  /// the deadline.
  static func waitEvents(_ fd: Int32, for events: Int16, until deadline: Int) -> Int16? {
    while true {
      let left = deadline - MonotonicClock.milliseconds
      if left <= 0 { return nil }
      var p = pollfd(fd: fd, events: events, revents: 0)
      let rc = poll(&p, 1, Int32(min(left, Int(Int32.max))))
      if rc > 0 { return p.revents }
      // EINTR: wait again, for what is left until the deadline.
      if rc < 0 && errno != EINTR { return Int16(POLLERR) }
    }
  }
}
