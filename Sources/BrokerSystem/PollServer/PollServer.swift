import BrokerBasics
import BrokerCore
import BrokerWire
import CBrokerShims  // MSG_NOSIGNAL: sys/socket.h may be owned by this module, not Glibc
import Glibc
import Synchronization

/// A connection the `PollServer` accepted and whose peer passed its check. The server owns the
/// descriptor: a connection handed over ends with `PollServer.reply` or `PollServer.discard`.
public struct PollConnection: Sendable {
  package let fd: Int32
  /// Tells this connection from a later one that gets the same descriptor number.
  let serial: UInt64
  /// The index in `PollServer.Options.listeners` of the socket it came on.
  public let listener: Int
  /// What the peer check gave for it (the agent: the peer's pid; 0 when none).
  public let peer: Int32
}

/// How reading a request ended.
public enum PollRead: Sendable, Equatable {
  /// The whole request, as `Options.frame` cut it.
  case request([UInt8])
  /// More than `Options.maxRequestBytes`, or `frame` said so.
  case tooLarge
  /// Not complete within `Options.readMilliseconds`.
  case timedOut
  /// The peer closed before the request was complete (`frame` said so).
  case closed
  /// `recv` failed with this errno.
  case failed(Int32)
}

/// What `Options.frame` finds in the bytes read so far.
public enum PollFrame: Sendable, Equatable {
  case more
  case complete([UInt8])
  case tooLarge
  case closed
}

/// The one poll-loop server under the agent, the loopback redirect listener and the SDK
/// credential endpoints: a `poll` loop on one dedicated thread over non-blocking descriptors (the
/// listening sockets, each connection being read or written, a wake pipe), so no blocking call
/// runs on Swift's cooperative pool (architecture.md, "Concurrency").
///
/// Each accepted connection passes `Options.admit` before a byte is read (others are closed
/// unread), then is read until `Options.frame` finds its request whole, within
/// `readMilliseconds`. A whole request (or why there is none) goes to `start`'s `quick` on the
/// loop's thread: the reply it gives is sent there (within `writeMilliseconds`); else the
/// connection is handed over in `connections`, one hand-over between threads per request, and
/// whoever answers it calls `reply` (sent on the caller's thread when the socket takes it whole;
/// the loop sends the rest) or `discard`. At most `maxConnections` are open, fewer when the
/// descriptor limit needs it (`DescriptorReserve`); a further one closes the reader waiting longest.
/// The loop stops accepting on `stop()` or after `idleMilliseconds` with no connection open
/// (unless `keepAlive` says otherwise), hands over the requests still being read, and ends once
/// every open connection is closed; `stop(drain: false)` closes them all at once, `stopReading()`
/// those not yet answered (the replies given still go out).
public final class PollServer: Sendable {
  public struct Options: Sendable {
    /// The listening sockets (non-blocking; their owner closes them after the server ends).
    public var listeners: [Int32]
    /// Says whether the peer of a new connection (`fd`, index of its listener) may be served:
    /// a value kept in `PollConnection.peer`, or nil to close it unread.
    public var admit: @Sendable (_ fd: Int32, _ listener: Int) -> Int32? = { _, _ in 0 }
    /// Cuts the request out of the bytes read so far (`ended`: the peer shut its writing side).
    public var frame: @Sendable (_ bytes: [UInt8], _ ended: Bool) -> PollFrame
    public var maxRequestBytes: Int
    /// How long a client may take to send its whole request, and to take in a reply, in ms.
    public var readMilliseconds = 10_000
    public var writeMilliseconds = 10_000
    /// Connections open at once, at most (lowered to what the descriptor limit leaves).
    public var maxConnections = 4096
    /// With no connection open this long (ms), the server stops; nil: never.
    public var idleMilliseconds: Int? = nil
    /// Asked once the idle time has passed: true postpones the stop by another idle time.
    public var keepAlive: @Sendable () -> Bool = { false }
    /// Names the server in errors and logs ("the agent socket").
    public var purpose: String
    /// One line per refused, evicted or failed connection; never a request's bytes.
    public var log: @Sendable (String) -> Void = { _ in }

    public init(
      listeners: [Int32], purpose: String, maxRequestBytes: Int,
      frame: @escaping @Sendable (_ bytes: [UInt8], _ ended: Bool) -> PollFrame
    ) {
      self.listeners = listeners
      self.purpose = purpose
      self.maxRequestBytes = maxRequestBytes
      self.frame = frame
    }
  }

  /// Asked on the loop's thread for each read that ended: the reply to send at once (it must
  /// not wait for anything: every other connection waits meanwhile), or nil to hand it over.
  public typealias Quick = @Sendable (PollConnection, PollRead) -> [UInt8]?

  struct PendingRead {
    var connection: PollConnection
    var buffer: [UInt8] = []
    var deadline: Int
  }
  struct PendingWrite {
    var connection: PollConnection
    var bytes: [UInt8]
    var offset = 0
    var deadline: Int
    /// Resumed once the reply is sent or dropped (nil: the loop's own reply, from `quick`).
    var continuation: CheckedContinuation<Void, Never>?
  }
  struct State {
    var reads: [Int32: PendingRead] = [:]
    var writes: [Int32: PendingWrite] = [:]
    /// Connections handed over and not yet answered: descriptor, serial.
    var handed: [Int32: UInt64] = [:]
    var open = 0
    var serial: UInt64 = 0
    var lastActivity: Int
    var stopping = false
    /// `stop(drain: false)`: close every connection at once.
    var abandon = false
    /// `stopReading()`: close every connection not yet answered; replies being sent go out.
    var closeUnanswered = false
    /// The loop's thread has returned (it touches no listening socket any more).
    var ended = false
    var endWaiters: [CheckedContinuation<Void, Never>] = []
  }

  let state: Mutex<State>
  let options: Options
  let wake: WakePipe
  let reserve: DescriptorReserve
  /// `options.maxConnections`, lowered to what the descriptor limit leaves.
  let maxConnections: Int
  /// Connections handed over, with their reads' outcomes, in the order they ended; finishes
  /// once the server has stopped accepting and has no request left being read.
  public let connections: AsyncStream<(PollConnection, PollRead)>
  let sink: AsyncStream<(PollConnection, PollRead)>.Continuation

  /// - Throws: `SystemError.call` when the wake pipe cannot be made.
  public init(_ options: Options) throws(SystemError) {
    wake = try WakePipe(for: options.purpose)
    self.options = options
    reserve = DescriptorReserve()
    maxConnections = max(1, min(options.maxConnections, reserve.connectionRoom))
    state = Mutex(State(lastActivity: MonotonicClock.milliseconds))
    (connections, sink) = AsyncStream.makeStream(of: (PollConnection, PollRead).self)
  }

  /// Writes `bytes` to `connection` (within `writeMilliseconds`), then closes it. Sent here, on
  /// the caller's thread, as far as the socket takes it; the loop sends the rest.
  public func reply(_ connection: PollConnection, _ bytes: [UInt8]) async {
    let sent = state.withLock { s -> Int? in
      guard s.handed[connection.fd] == connection.serial else { return nil }  // closed by stop
      switch PollServer.send(connection.fd, bytes, from: 0) {
      case .done:
        s.close(connection.fd)
        return nil
      case .partial(let offset): return offset
      }
    }
    guard let offset = sent else { return wakeIfStopping() }
    await withCheckedContinuation { continuation in
      let deadline = MonotonicClock.milliseconds + options.writeMilliseconds
      let queued = state.withLock { s -> Bool in
        guard s.handed.removeValue(forKey: connection.fd) == connection.serial else { return false }
        s.writes[connection.fd] = PendingWrite(
          connection: connection, bytes: bytes, offset: offset, deadline: deadline, continuation: continuation)
        return true
      }
      if queued { wake.signal() } else { continuation.resume() }
    }
  }

  /// Closes a handed-over `connection` without an answer.
  public func discard(_ connection: PollConnection) {
    state.withLock { s in
      guard s.handed[connection.fd] == connection.serial else { return }
      s.close(connection.fd)
    }
    wakeIfStopping()
  }

  /// While serving, the loop looks at `open` again within a second (its poll bound while a
  /// connection is open), long before any idle time ends; a stopping loop is told at once.
  private func wakeIfStopping() {
    if state.withLock({ $0.stopping }) { wake.signal() }
  }

  /// Stops accepting. `drain`: connections open are still served; else all are closed at once
  /// (replies still being computed are dropped).
  public func stop(drain: Bool = true) {
    state.withLock { s in
      s.stopping = true
      if !drain { s.abandon = true }
    }
    wake.signal()
  }

  /// Stops accepting and closes every connection not yet answered (being read, or handed over);
  /// the replies being sent still go out, within `writeMilliseconds`.
  func stopReading() {
    state.withLock { s in
      s.stopping = true
      s.closeUnanswered = true
    }
    wake.signal()
  }

  /// Returns once the loop's thread has returned: its owner may close the listening sockets.
  /// Not cancellable (a cancelled caller stops the server first).
  public func ended() async {
    await withCheckedContinuation { continuation in
      let done = state.withLock { s in
        if !s.ended { s.endWaiters.append(continuation) }
        return s.ended
      }
      if done { continuation.resume() }
    }
  }

  enum SendOutcome { case done, partial(Int) }

  /// Sends `bytes` from `offset` on the non-blocking `fd` until all is sent (`.done`), the
  /// socket is full (`.partial` with the new offset), or the peer is gone (`.done`: dropped).
  static func send(_ fd: Int32, _ bytes: [UInt8], from offset: Int) -> SendOutcome {
    var offset = offset
    while offset < bytes.count {
      let n = retryingOnInterrupt {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
      }
      if n > 0 { offset += n; continue }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .partial(offset) }
      return .done
    }
    return .done
  }
}

extension PollServer.State {
  /// Closes `fd`, whichever phase it is in, and counts it closed.
  mutating func close(_ fd: Int32) {
    Glibc.close(fd)
    reads[fd] = nil
    writes[fd] = nil
    handed[fd] = nil
    open -= 1
    lastActivity = MonotonicClock.milliseconds
  }
}
