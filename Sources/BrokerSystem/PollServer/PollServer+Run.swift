import BrokerBasics
import BrokerCore
import BrokerWire
import CBrokerShims
import Glibc

extension PollServer {
  /// Starts the loop on a new detached thread; `quick` is asked there for each read that ended.
  /// - Throws: `SystemError.call` when no thread can be created.
  public func start(quick: @escaping Quick = { _, _ in nil }) throws(SystemError) {
    try DedicatedThread.detach(for: options.purpose) { [self] in runLoop(quick: quick) }
  }

  /// The loop: until stopped (or idle) and every connection is closed.
  func runLoop(quick: Quick) {
    var accepting = true
    // Out of descriptors with no spare to trade: the pending connections stay in the backlog and
    // the listening sockets stay readable, so they are left out of `poll` for a moment.
    var acceptPausedUntil = 0
    var finished = false
    var spare = DescriptorReserve.Spare()
    defer {
      spare.release()
      let waiters = state.withLock { s in
        s.ended = true
        defer { s.endWaiters = [] }
        return s.endWaiters
      }
      for waiter in waiters { waiter.resume() }
    }
    while true {
      let now = MonotonicClock.milliseconds
      if state.withLock({ $0.abandon }) { return abandonAll() }
      state.withLock { s in
        guard s.closeUnanswered else { return }
        for fd in Array(s.reads.keys) + Array(s.handed.keys) { s.close(fd) }
      }
      let (stopping, reads, writes, open, idleSince) = state.withLock { s in
        (s.stopping, s.reads.values.map(\.connection), s.writes.values.map(\.connection), s.open, s.lastActivity)
      }
      let idle = options.idleMilliseconds.map { open == 0 && now - idleSince >= $0 } ?? false
      if accepting && !stopping && idle && options.keepAlive() {
        state.withLock { $0.lastActivity = now }  // e.g. the encrypted store is unlocked: no idle exit
        continue
      }
      if accepting && (stopping || idle) {
        accepting = false
        state.withLock { $0.stopping = true }
      }
      if !accepting && reads.isEmpty && !finished {
        finished = true  // every accepted request has been handed over
        sink.finish()
      }
      if !accepting && open == 0 { break }
      var fds = [pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
      let polling = accepting && now >= acceptPausedUntil
      if polling { for fd in options.listeners { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) } }
      for c in reads { fds.append(pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)) }
      for c in writes { fds.append(pollfd(fd: c.fd, events: Int16(POLLOUT), revents: 0)) }
      var timeout = 60_000
      if accepting && open == 0, let idleMilliseconds = options.idleMilliseconds {
        timeout = max(0, idleSince + idleMilliseconds - now)
      }
      if open > 0 { timeout = min(timeout, 1000) }
      if accepting && !polling { timeout = min(timeout, max(1, acceptPausedUntil - now)) }
      _ = poll(&fds, nfds_t(fds.count), Int32(min(timeout, 60_000)))
      withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { bytes in
        while Glibc.read(wake.readEnd, bytes.baseAddress, bytes.count) > 0 {}
      }
      if polling {
        for (i, fd) in options.listeners.enumerated() where fds[1 + i].revents != 0 {
          if !acceptAll(from: fd, listener: i, spare: &spare, quick: quick) {
            acceptPausedUntil = MonotonicClock.milliseconds + 100
          }
        }
      }
      // Accepting may have closed some of them (`makeRoom`), and their numbers may belong to
      // anything else in the process by now: each is served only while it is still the same
      // connection.
      for c in reads { serviceRead(c, quick: quick) }
      for c in writes { serviceWrite(c) }
    }
  }

  /// `stop(drain: false)`: closes every connection, resumes every waiting `reply`, ends the stream.
  func abandonAll() {
    let waiting = state.withLock { s in
      let waiting = s.writes.values.compactMap(\.continuation)
      for fd in Array(s.reads.keys) + Array(s.writes.keys) + Array(s.handed.keys) { s.close(fd) }
      return waiting
    }
    for continuation in waiting { continuation.resume() }
    sink.finish()
  }

  /// Accepts every pending connection on `listening` (index `listener`); closes unread any that
  /// `admit` refuses, and makes room when the server is full (`makeRoom`).
  /// - Returns: false when out of descriptors with no spare to trade: the caller pauses accepting.
  func acceptAll(from listening: Int32, listener: Int, spare: inout DescriptorReserve.Spare, quick: Quick) -> Bool {
    while true {
      // accept4(SOCK_CLOEXEC | SOCK_NONBLOCK): one call, no window, no two `fcntl`s.
      let fd = cbroker_accept_cloexec_nonblock(listening)
      if fd < 0 {
        let error = errno
        if error == EINTR || error == ECONNABORTED { continue }
        if error == EAGAIN || error == EWOULDBLOCK { return true }
        if (error == EMFILE || error == ENFILE) && spare.refuseOne(listening) {
          options.log("refused a connection on \(options.purpose): out of descriptors")
          continue
        }
        options.log("accept failed on \(options.purpose) (\(Errno(error).description))")
        return false
      }
      guard let peer = options.admit(fd, listener) else {
        Glibc.close(fd)
        continue
      }
      guard makeRoom(short: !reserve.leavesRoom(after: fd), quick: quick) else {
        options.log("refused a connection on \(options.purpose): no room, none being read")
        Glibc.close(fd)
        continue
      }
      let connection = state.withLock { s in
        s.open += 1
        s.serial += 1
        s.lastActivity = MonotonicClock.milliseconds
        let connection = PollConnection(fd: fd, serial: s.serial, listener: listener, peer: peer)
        s.reads[fd] = PendingRead(connection: connection, deadline: s.lastActivity + options.readMilliseconds)
        return connection
      }
      serviceRead(connection, quick: quick)  // a client has usually sent its whole request by now
    }
  }

  /// True when one more connection fits. At `maxConnections`, or `short` of descriptors (the
  /// new one's number is in the reserve), the reader waiting longest is closed: idle or crawling
  /// clients never keep a real request out, and the process's open descriptors do not grow. That
  /// reader is read once more first: a request that has come since its last read is served, and
  /// then the next one waiting longest makes room if it is still needed.
  /// False when none is reading.
  func makeRoom(short: Bool, quick: Quick) -> Bool {
    while true {
      let oldest: PollConnection?? = state.withLock { s in
        guard short || s.open >= maxConnections else { return .some(nil) }
        // Accepted first, waiting longest: every reader has the same time to send its request.
        return s.reads.values.min(by: { $0.connection.serial < $1.connection.serial }).map { .some($0.connection) }
      }
      guard let candidate = oldest else { return false }
      guard let reader = candidate else { return true }
      serviceRead(reader, quick: quick)
      let freed = state.withLock { s -> Bool? in
        if s.reads[reader.fd]?.connection.serial == reader.serial {
          s.close(reader.fd)
          options.log("closed the connection waiting longest on \(options.purpose): \(short ? "descriptors kept in reserve" : "\(maxConnections) open")")
          return true
        }
        // Answered and closed: its place is free. Handed over or still being answered: it stays open.
        let open = s.handed[reader.fd] == reader.serial || s.writes[reader.fd]?.connection.serial == reader.serial
        return open ? nil : true
      }
      if freed != nil { return true }
    }
  }
}
