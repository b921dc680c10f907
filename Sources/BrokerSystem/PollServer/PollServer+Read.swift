import BrokerBasics
import BrokerCore
import BrokerWire
import Glibc

extension PollServer {
  /// Reads what `fd` has; once its read has ended (`frame`, the size bound, the deadline, an
  /// error), answers it when `quick` can, else hands the connection over.
  ///
  /// Only the loop's thread closes a connection being read, so once `connection` is found still
  /// being read, its descriptor stays its own until this returns; a number alone is never read
  /// (closed, it may already be another socket of the process's, with another's bytes).
  func serviceRead(_ connection: PollConnection, quick: Quick) {
    let fd = connection.fd
    guard state.withLock({ $0.reads[fd]?.connection.serial == connection.serial }) else { return }
    var ended = false
    var error: Int32?
    var received: [UInt8] = []
    let limit = options.maxRequestBytes
    // A stack buffer, not a zeroed 16 KiB array per call.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16384) { chunk in
      while !ended && error == nil && received.count <= limit {
        let n = retryingOnInterrupt { recv(fd, chunk.baseAddress, chunk.count, 0) }
        if n > 0 { received.append(contentsOf: chunk[0..<n]); continue }
        if n == 0 { ended = true }
        else if errno == EAGAIN || errno == EWOULDBLOCK { break }
        else { error = errno }
      }
    }
    let finished: (PollConnection, PollRead)? = state.withLock { s in
      guard var pending = s.reads[fd], pending.connection.serial == connection.serial else { return nil }
      pending.buffer += received
      var result: PollRead?
      if let error { result = .failed(error) }
      else {
        switch options.frame(pending.buffer, ended) {
        case .complete(let request): result = .request(request)
        case .tooLarge: result = .tooLarge
        case .closed: result = .closed
        case .more:
          if pending.buffer.count > limit { result = .tooLarge }
          else if ended { result = .closed }
          else if MonotonicClock.milliseconds >= pending.deadline { result = .timedOut }
        }
      }
      guard let result else {
        s.reads[fd] = pending
        return nil
      }
      s.reads[fd] = nil
      s.handed[fd] = pending.connection.serial
      return (pending.connection, result)
    }
    guard let (connection, result) = finished else { return }
    if let reply = quick(connection, result) {
      answer(connection, reply)
    } else {
      sink.yield((connection, result))
    }
  }

  /// Sends a reply `quick` gave, from the loop's thread: what the socket takes now, the rest
  /// when it is writable again (within `writeMilliseconds`).
  func answer(_ connection: PollConnection, _ bytes: [UInt8]) {
    state.withLock { s in
      switch PollServer.send(connection.fd, bytes, from: 0) {
      case .done:
        s.close(connection.fd)
      case .partial(let offset):
        s.handed[connection.fd] = nil
        let deadline = MonotonicClock.milliseconds + options.writeMilliseconds
        s.writes[connection.fd] = PendingWrite(
          connection: connection, bytes: bytes, offset: offset, deadline: deadline, continuation: nil)
      }
    }
  }

  func serviceWrite(_ connection: PollConnection) {
    let fd = connection.fd
    let finished: CheckedContinuation<Void, Never>?? = state.withLock { s in
      guard var pending = s.writes[fd], pending.connection.serial == connection.serial else { return nil }
      var done = false
      switch PollServer.send(fd, pending.bytes, from: pending.offset) {
      case .done: done = true
      case .partial(let offset): pending.offset = offset
      }
      if MonotonicClock.milliseconds >= pending.deadline { done = true }
      guard done else {
        s.writes[fd] = pending
        return nil
      }
      s.close(fd)
      return .some(pending.continuation)
    }
    if case .some(.some(let continuation)) = finished { continuation.resume() }
  }
}
