internal import CBrokerShims
import BrokerWire
import Glibc

extension SocketLoop {
  private final class Start {
    let loop: SocketLoop
    let quick: Quick
    init(_ loop: SocketLoop, _ quick: @escaping Quick) { (self.loop, self.quick) = (loop, quick) }
  }

  /// Starts the loop on a new detached thread; `quick` is asked for each whole request there.
  /// - Throws: `AgentSetupError.call` when no thread can be created.
  func start(quick: @escaping Quick = { _ in nil }) throws(AgentSetupError) {
    let box = Unmanaged.passRetained(Start(self, quick)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { raw in
      guard let raw else { return nil }
      let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
      start.loop.runLoop(quick: start.quick)
      return nil
    }, box)
    guard rc == 0 else {
      Unmanaged<Start>.fromOpaque(box).release()
      throw .call(what: "start a thread for", path: "the agent socket", reason: String(cString: strerror(rc)))
    }
    pthread_detach(thread)
  }

  /// The loop: until stopped (or idle) and every connection is closed.
  func runLoop(quick: Quick) {
    var accepting = true
    // Out of descriptors (EMFILE/ENFILE): the pending connections stay in the backlog and the
    // listening socket stays readable, so it is left out of `poll` for a moment (no busy loop).
    var acceptPausedUntil = 0
    var finished = false
    while true {
      let now = MonotonicClock.milliseconds
      let (stopping, reads, writes, open, idleSince) = state.withLock { s in
        (s.stopping, Array(s.reads.keys), Array(s.writes.keys), s.open, s.lastActivity)
      }
      if accepting && !stopping && open == 0 && now - idleSince >= idleMilliseconds && keepAlive() {
        state.withLock { $0.lastActivity = now }  // e.g. the encrypted store is unlocked: no idle exit
        continue
      }
      if accepting && (stopping || (open == 0 && now - idleSince >= idleMilliseconds)) {
        accepting = false
        state.withLock { $0.stopping = true }
      }
      if !accepting && reads.isEmpty && !finished {
        finished = true  // every accepted request has been handed over
        sink.finish()
      }
      if !accepting && open == 0 { break }
      var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
      let polling = accepting && now >= acceptPausedUntil
      let listeners = forwardFD >= 0 ? [listenFD, forwardFD] : [listenFD]
      if polling { for fd in listeners { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) } }
      for fd in reads { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
      for fd in writes { fds.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)) }
      var timeout = accepting && open == 0 ? max(0, idleSince + idleMilliseconds - now) : 1000
      if !reads.isEmpty || !writes.isEmpty { timeout = min(timeout, 1000) }
      if accepting && !polling { timeout = min(timeout, max(1, acceptPausedUntil - now)) }
      _ = poll(&fds, nfds_t(fds.count), Int32(min(timeout, 60_000)))
      withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { bytes in
        while Glibc.read(wakeRead, bytes.baseAddress, bytes.count) > 0 {}
      }
      if polling {
        for (i, fd) in listeners.enumerated() where fds[1 + i].revents != 0 {
          if !acceptAll(from: fd, quick: quick) { acceptPausedUntil = MonotonicClock.milliseconds + 100 }
        }
      }
      for fd in reads { serviceRead(fd, quick: quick) }
      for fd in writes { serviceWrite(fd) }
    }
  }

  /// Accepts every pending connection on `listener` (the agent's socket, or its forwarding socket:
  /// `forwardFD`); refuses (closes unread) any whose peer is another uid.
  /// - Returns: false when `accept` failed otherwise than with "none pending" (out of
  ///   descriptors): the caller pauses accepting briefly.
  @discardableResult
  func acceptAll(from listener: Int32, quick: Quick) -> Bool {
    while true {
      // accept4(SOCK_CLOEXEC | SOCK_NONBLOCK): one call, no window, no two `fcntl`s.
      let fd = cbroker_accept_cloexec_nonblock(listener)
      if fd < 0 {
        if errno == EINTR || errno == ECONNABORTED { continue }
        if errno == EAGAIN || errno == EWOULDBLOCK { return true }
        log("accept failed (\(String(cString: strerror(errno))))")
        return false
      }
      guard let peer = PeerCheck.peer(of: fd), peer.uid == expectedUID else {
        let who = PeerCheck.peer(of: fd).map { "uid \($0.uid) (pid \($0.pid))" } ?? "an unknown peer"
        let socket = listener == forwardFD ? " on the forwarding socket" : ""
        log("refused a connection from \(who)\(socket): only uid \(expectedUID) may use this agent")
        Glibc.close(fd)
        continue
      }
      let connection = AgentConnection(fd: fd, peerPID: peer.pid, forwarded: listener == forwardFD)
      state.withLock { s in
        s.open += 1
        s.lastActivity = MonotonicClock.milliseconds
        s.reads[fd] = PendingRead(connection: connection, deadline: s.lastActivity + readMilliseconds)
      }
      serviceRead(fd, quick: quick)  // the front has usually sent its whole request by now
    }
  }

  /// Reads what `fd` has; once its request is complete, answers it when `quick` can, else hands
  /// the connection over (also when too large, failed, or past its deadline).
  func serviceRead(_ fd: Int32, quick: Quick) {
    var outcome: ReadResult?
    var received: [UInt8] = []
    // A stack buffer, not a zeroed 16 KiB array per call (it was most of the loop's own work).
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16384) { chunk in
      while outcome == nil {
        let n = recv(fd, chunk.baseAddress, chunk.count, 0)
        if n > 0 {
          received.append(contentsOf: chunk[0..<n])
          if received.count > maxRequestBytes { outcome = .tooLarge }
          continue
        }
        if n == 0 { outcome = .request([]) }
        else if errno == EINTR { continue }
        else if errno == EAGAIN || errno == EWOULDBLOCK { break }
        else { outcome = .failed(errno) }
      }
    }
    let finished: (PendingRead, ReadResult)? = state.withLock { s in
      guard var pending = s.reads[fd] else { return nil }
      pending.buffer += received
      var result = outcome
      if result == .tooLarge || pending.buffer.count > maxRequestBytes { result = .tooLarge }
      else if case .request = result { result = .request(pending.buffer) }
      else if result == nil && MonotonicClock.milliseconds >= pending.deadline { result = .timedOut }
      guard let result else {
        s.reads[fd] = pending
        return nil
      }
      s.reads[fd] = nil
      return (pending, result)
    }
    guard let (pending, result) = finished else { return }
    // A forwarded request is never answered from the kept answers: its own rules decide it.
    if case .request(let bytes) = result, !pending.connection.forwarded, let reply = quick(bytes) {
      answer(pending.connection, reply)
    } else {
      sink.yield((pending.connection, result))
    }
  }

  /// Sends a reply `quick` gave, from the loop's thread: what the socket takes now, the rest
  /// when it is writable again (within `writeMilliseconds`).
  func answer(_ connection: AgentConnection, _ bytes: [UInt8]) {
    switch SocketLoop.send(connection.fd, bytes, from: 0) {
    case .done:
      discard(connection)
    case .partial(let offset):
      let deadline = MonotonicClock.milliseconds + writeMilliseconds
      state.withLock {
        $0.writes[connection.fd] = PendingWrite(bytes: bytes, offset: offset, deadline: deadline, continuation: nil)
      }
    }
  }

  func serviceWrite(_ fd: Int32) {
    let finished: CheckedContinuation<Void, Never>? = state.withLock { s in
      guard var pending = s.writes[fd] else { return nil }
      var done = false
      switch SocketLoop.send(fd, pending.bytes, from: pending.offset) {
      case .done: done = true
      case .partial(let offset): pending.offset = offset
      }
      if MonotonicClock.milliseconds >= pending.deadline { done = true }
      guard done else {
        s.writes[fd] = pending
        return nil
      }
      s.writes[fd] = nil
      Glibc.close(fd)
      s.open -= 1
      s.lastActivity = MonotonicClock.milliseconds
      return pending.continuation
    }
    finished?.resume()
  }
}
