import BrokerWire
import Glibc
import Synchronization

/// A connection accepted by the `SocketLoop` whose peer passed the uid check. The loop owns the
/// descriptor: a connection ends with `SocketLoop.reply` or `SocketLoop.discard`.
public struct AgentConnection: Sendable {
  let fd: Int32
  /// The peer's pid (`SO_PEERCRED`), for logs.
  public let peerPID: Int32
  /// Accepted on the forwarding socket (interface.md §8): answered by the forwarding rules.
  public var forwarded = false
}

/// The agent's socket I/O: a `poll` loop on one dedicated thread over non-blocking descriptors
/// (the listening socket, each connection being read or written, a wake-up pipe), so no blocking
/// call ever runs on Swift's cooperative pool (code-models.md §9.9).
///
/// Accepting, on the agent's socket and on its forwarding socket when there is one: every new
/// connection's `SO_PEERCRED` uid is compared with `expectedUID` before a byte is read; others are
/// closed at once. The kernel gives that uid as the agent's user namespace sees it, so a process in
/// a user namespace whose uid maps to the agent's (`unshare --map-root-user`, rootless Podman)
/// passes, and one whose uid maps to no uid or another one does not. The loop reads each request itself (at once when the
/// client has already sent it, as the front does) and hands over the connection with the whole
/// request in `connections`, so a request costs one hand-over between threads, not a round trip
/// per phase; a request `start`'s `quick` can answer at once (a kept answer) is answered on the loop's own
/// thread and never handed over. A reply is sent by its caller when the socket takes it whole (a reply of a few
/// hundred bytes always does); only the rest of a larger one is left to the loop. The loop stops
/// accepting on `stop()` or after `idleMilliseconds` with no connection open, hands over the
/// requests still being read, then ends once every open connection is closed.
final class SocketLoop: Sendable {
  enum ReadResult: Sendable, Equatable {
    /// The whole request (the client shut down its writing side).
    case request([UInt8])
    case tooLarge
    case timedOut
    case failed(Int32)
  }

  struct PendingRead {
    var connection: AgentConnection
    var buffer: [UInt8] = []
    var deadline: Int
  }
  struct PendingWrite {
    var bytes: [UInt8]
    var offset = 0
    var deadline: Int
    /// Resumed once the reply is sent (nil: the loop answered the request itself, `quick`).
    var continuation: CheckedContinuation<Void, Never>?
  }
  struct State {
    var reads: [Int32: PendingRead] = [:]
    var writes: [Int32: PendingWrite] = [:]
    var open = 0
    var lastActivity: Int
    var stopping = false
  }

  let state: Mutex<State>
  let listenFD: Int32
  /// The forwarding socket's listening descriptor, or -1.
  let forwardFD: Int32
  let wakeRead: Int32
  let wakeWrite: Int32
  let expectedUID: UInt32
  let maxRequestBytes: Int
  let idleMilliseconds: Int
  /// Asked when the idle time has passed: true postpones the idle exit by another idle time.
  let keepAlive: @Sendable () -> Bool
  let log: @Sendable (String) -> Void
  /// How long a client may take to send its whole request, in ms.
  let readMilliseconds: Int
  /// Asked on the loop's thread for each whole request (`start`'s argument): the reply's bytes
  /// when it can be given at once without waiting for anything (a kept answer), or nil to hand
  /// the request over.
  typealias Quick = @Sendable ([UInt8]) -> [UInt8]?
  /// How long a client may take to take in a reply the loop sends itself, in ms.
  let writeMilliseconds: Int
  /// Accepted connections with their requests read (or why not), in the order they became
  /// complete; finishes once the loop has stopped accepting and has no request left being read.
  let connections: AsyncStream<(AgentConnection, ReadResult)>
  let sink: AsyncStream<(AgentConnection, ReadResult)>.Continuation

  /// - Throws: `AgentSetupError.call` when the wake-up pipe cannot be made.
  init(
    listenFD: Int32, forwardFD: Int32 = -1, expectedUID: UInt32, maxRequestBytes: Int, readMilliseconds: Int, idleMilliseconds: Int,
    keepAlive: @escaping @Sendable () -> Bool = { false }, writeMilliseconds: Int = 10_000,
    log: @escaping @Sendable (String) -> Void
  ) throws(AgentSetupError) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw .call(what: "create", path: "the agent's wake-up pipe", reason: String(cString: strerror(errno))) }
    for fd in fds {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    (wakeRead, wakeWrite) = (fds[0], fds[1])
    self.listenFD = listenFD
    self.forwardFD = forwardFD
    self.expectedUID = expectedUID
    self.maxRequestBytes = maxRequestBytes
    self.idleMilliseconds = idleMilliseconds
    self.readMilliseconds = readMilliseconds
    self.keepAlive = keepAlive
    self.writeMilliseconds = writeMilliseconds
    self.log = log
    state = Mutex(State(lastActivity: MonotonicClock.milliseconds))
    (connections, sink) = AsyncStream.makeStream(of: (AgentConnection, ReadResult).self)
  }

  deinit {
    Glibc.close(wakeRead)
    Glibc.close(wakeWrite)
  }

  /// Writes `bytes` to `connection` (within `timeoutMilliseconds`), then closes it. Sent here,
  /// on the caller's thread, as far as the socket takes it without waiting; the loop sends the rest.
  func reply(_ connection: AgentConnection, _ bytes: [UInt8], timeoutMilliseconds: Int) async {
    switch SocketLoop.send(connection.fd, bytes, from: 0) {
    case .done:
      discard(connection)
    case .partial(let offset):
      await withCheckedContinuation { continuation in
        let deadline = MonotonicClock.milliseconds + timeoutMilliseconds
        state.withLock {
          $0.writes[connection.fd] = PendingWrite(bytes: bytes, offset: offset, deadline: deadline, continuation: continuation)
        }
        wake()
      }
    }
  }

  enum SendOutcome { case done, partial(Int) }

  /// Sends `bytes` from `offset` on the non-blocking `fd` until all is sent (`.done`), the
  /// socket is full (`.partial` with the new offset), or the peer is gone (`.done`: the reply
  /// is dropped).
  static func send(_ fd: Int32, _ bytes: [UInt8], from offset: Int) -> SendOutcome {
    var offset = offset
    while offset < bytes.count {
      let n = bytes.withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
      }
      if n > 0 { offset += n; continue }
      if n < 0 && errno == EINTR { continue }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .partial(offset) }
      return .done
    }
    return .done
  }

  /// Closes `connection` without an answer.
  func discard(_ connection: AgentConnection) {
    let stopping = state.withLock { s in
      Glibc.close(connection.fd)
      s.open -= 1
      s.lastActivity = MonotonicClock.milliseconds
      return s.stopping
    }
    // While serving, the loop looks at `open` again within a second (its poll bound while a
    // connection is open), long before any idle time ends; a stopping loop is told at once.
    if stopping { wake() }
  }

  /// Stops accepting; open connections are still served.
  func stop() {
    state.withLock { $0.stopping = true }
    wake()
  }

  func wake() {
    var byte: UInt8 = 1
    _ = Glibc.write(wakeWrite, &byte, 1)
  }
}
