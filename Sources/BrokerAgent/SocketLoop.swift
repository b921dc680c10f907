import BrokerWire
import Glibc
import Synchronization

/// A connection accepted by the `SocketLoop` whose peer passed the uid check. The loop owns the
/// descriptor: a connection ends with `SocketLoop.reply` or `SocketLoop.discard`.
public struct AgentConnection: Sendable {
  let fd: Int32
  /// The peer's pid (`SO_PEERCRED`), for logs.
  public let peerPID: Int32
}

/// All socket I/O of the agent on one dedicated thread: a `poll` loop over non-blocking
/// descriptors (the listening socket, each connection being read or written, a wake-up pipe), so
/// no blocking call ever runs on Swift's cooperative pool (code-models.md §9.9). Async callers
/// register a read or a write and are resumed by the loop.
///
/// Accepting: every new connection's `SO_PEERCRED` uid is compared with `expectedUID` before a
/// byte is read; others are closed at once. The loop stops accepting on `stop()` or after
/// `idleMilliseconds` with no connection open, then ends once every open connection is closed.
final class SocketLoop: Sendable {
  enum ReadResult: Sendable, Equatable {
    /// The whole request (the client shut down its writing side).
    case request([UInt8])
    case tooLarge
    case timedOut
    case failed(Int32)
  }

  struct PendingRead {
    var buffer: [UInt8] = []
    var deadline: Int
    var continuation: CheckedContinuation<ReadResult, Never>
  }
  struct PendingWrite {
    var bytes: [UInt8]
    var offset = 0
    var deadline: Int
    var continuation: CheckedContinuation<Void, Never>
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
  let wakeRead: Int32
  let wakeWrite: Int32
  let expectedUID: UInt32
  let maxRequestBytes: Int
  let idleMilliseconds: Int
  /// Asked when the idle time has passed: true postpones the idle exit by another idle time.
  let keepAlive: @Sendable () -> Bool
  let log: @Sendable (String) -> Void
  /// Accepted connections, in order; finishes when the loop stops accepting.
  let connections: AsyncStream<AgentConnection>
  let sink: AsyncStream<AgentConnection>.Continuation

  /// - Throws: `AgentSetupError.call` when the wake-up pipe cannot be made.
  init(
    listenFD: Int32, expectedUID: UInt32, maxRequestBytes: Int, idleMilliseconds: Int,
    keepAlive: @escaping @Sendable () -> Bool = { false }, log: @escaping @Sendable (String) -> Void
  ) throws(AgentSetupError) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw .call(what: "create", path: "the agent's wake-up pipe", reason: String(cString: strerror(errno))) }
    for fd in fds {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    (wakeRead, wakeWrite) = (fds[0], fds[1])
    self.listenFD = listenFD
    self.expectedUID = expectedUID
    self.maxRequestBytes = maxRequestBytes
    self.idleMilliseconds = idleMilliseconds
    self.keepAlive = keepAlive
    self.log = log
    state = Mutex(State(lastActivity: MonotonicClock.milliseconds))
    (connections, sink) = AsyncStream.makeStream(of: AgentConnection.self)
  }

  deinit {
    Glibc.close(wakeRead)
    Glibc.close(wakeWrite)
  }

  /// Reads one request from `connection` until the client's end of writing, at most
  /// `maxRequestBytes`, within `timeoutMilliseconds`.
  func read(_ connection: AgentConnection, timeoutMilliseconds: Int) async -> ReadResult {
    await withCheckedContinuation { continuation in
      let deadline = MonotonicClock.milliseconds + timeoutMilliseconds
      state.withLock { $0.reads[connection.fd] = PendingRead(deadline: deadline, continuation: continuation) }
      wake()
    }
  }

  /// Writes `bytes` to `connection` (within `timeoutMilliseconds`), then closes it.
  func reply(_ connection: AgentConnection, _ bytes: [UInt8], timeoutMilliseconds: Int) async {
    await withCheckedContinuation { continuation in
      let deadline = MonotonicClock.milliseconds + timeoutMilliseconds
      state.withLock { $0.writes[connection.fd] = PendingWrite(bytes: bytes, deadline: deadline, continuation: continuation) }
      wake()
    }
  }

  /// Closes `connection` without an answer.
  func discard(_ connection: AgentConnection) {
    state.withLock { s in
      Glibc.close(connection.fd)
      s.open -= 1
      s.lastActivity = MonotonicClock.milliseconds
    }
    wake()
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
