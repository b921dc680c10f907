@testable import BrokerAgent
import BrokerWire
import Glibc
import Synchronization
import Testing

/// The socket loop reads each request itself and leaves a reply to its caller unless the socket
/// is full: the phases a quick client never shows (a request in pieces, a stop mid-request, a
/// full socket) are made here on purpose.
@Suite struct SocketLoopTests {
  /// Connects and sends `first`, tells `sent`, waits `pause` ms, sends `rest`, then reads the
  /// reply to the end.
  func slowExchange(
    _ socket: String, _ first: [UInt8], _ rest: [UInt8], pause: Int, sent: Counter = Counter()
  ) async -> AgentClient.Exchange {
    await withCheckedContinuation { continuation in
      Thread0.run {
        guard case .connected(let fd) = AgentClient.connect(to: socket) else { return continuation.resume(returning: .failed(-1)) }
        defer { close(fd) }
        _ = first.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        sent.add()
        usleep(useconds_t(pause * 1000))
        continuation.resume(returning: AgentClient.exchange(fd: fd, request: rest, timeoutMilliseconds: 30_000))
      }
    }
  }

  @Test func aRequestSentInPiecesIsReadWhole() async throws {
    let (dir, listener) = try privateListener()
    defer { listener.close(); dir.remove() }
    let (server, task) = try serve(listener) { request in
      AgentReply(exit: 3, output: Array(request.arguments.joined(separator: " ").utf8))
    }
    let request = try AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work"], config: "", input: []).encoded()
    let cut = request.count / 2
    let result = await slowExchange(listener.socketPath, Array(request[..<cut]), Array(request[cut...]), pause: 300)
    guard case .reply(let bytes) = result else {
      Issue.record("no reply: \(result)")
      return
    }
    #expect(try AgentReply.decode(bytes).output == Array("token get work".utf8))
    server.stop()
    try await task.value
  }

  /// `stop()` while a request is still being read: that request is still handed over and answered.
  @Test func aRequestBeingReadWhenStopComesIsAnswered() async throws {
    let (dir, listener) = try privateListener()
    defer { listener.close(); dir.remove() }
    let (server, task) = try serve(listener) { _ in AgentReply(exit: 5) }
    let request = try AgentRequest(operation: .status).encoded()
    let sent = Counter()
    async let result = slowExchange(listener.socketPath, Array(request.prefix(3)), Array(request.dropFirst(3)), pause: 2000, sent: sent)
    // Stop once the client is connected and the loop has had time to accept it (a loaded
    // machine took more than 200 ms to start the client's thread).
    while sent.value == 0 { try await Task.sleep(for: .milliseconds(20)) }
    try await Task.sleep(for: .milliseconds(500))
    server.stop()
    guard case .reply(let bytes) = await result else {
      Issue.record("the request being read at stop() was not answered")
      return
    }
    #expect(try AgentReply.decode(bytes).exit == 5)
    try await task.value
  }

  /// A full socket: `send` reports how far it got, and the rest goes out once the peer reads.
  @Test func sendStopsAtAFullSocketAndResumes() throws {
    var fds: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
    defer { close(fds[0]); close(fds[1]) }
    var small: Int32 = 4096
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    let bytes = (0..<60_000).map { UInt8($0 % 251) }  // a resume from the wrong offset shows
    guard case .partial(let first) = SocketLoop.send(fds[0], bytes, from: 0) else {
      Issue.record("a 4 KiB socket took 60,000 bytes at once")
      return
    }
    #expect(first > 0 && first < bytes.count)
    var received: [UInt8] = []
    var offset = first
    var spins = 0
    var chunk = [UInt8](repeating: 0, count: 65536)
    while received.count < bytes.count {
      let n = chunk.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, 0) }
      if n > 0 { received += chunk[0..<n] }
      guard offset < bytes.count else { continue }
      switch SocketLoop.send(fds[0], bytes, from: offset) {
      case .partial(let next): offset = next
      case .done: offset = bytes.count
      }
      spins += 1
      if spins > 1_000_000 {  // `.done` before all was sent: nothing more would ever arrive
        Issue.record("send stopped at \(offset) of \(bytes.count) bytes")
        return
      }
    }
    #expect(received == bytes)
  }

  /// A peer that has gone away: the reply is dropped (`.done`), no SIGPIPE.
  @Test func sendToAGonePeerIsDone() throws {
    var fds: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
    defer { close(fds[0]) }
    close(fds[1])
    guard case .done = SocketLoop.send(fds[0], Array("exit=0\n".utf8), from: 0) else {
      Issue.record("a send to a closed peer did not end")
      return
    }
  }

  /// What `quick` answers is answered on the loop's thread and never reaches the handler; what
  /// it declines does; both end their connections (a stopped loop ends only once none is open).
  @Test func aQuickAnswerNeverReachesTheHandler() async throws {
    let (dir, listener) = try privateListener()
    defer { listener.close(); dir.remove() }
    let handled = Counter()
    let quickThreads = Mutex<Set<UInt>>([])
    let (server, task) = try serve(
      listener,
      quick: { request in
        quickThreads.withLock { _ = $0.insert(UInt(pthread_self())) }
        return request.operation == .status ? AgentReply(exit: 0, output: Array("quick".utf8)) : nil
      },
      handler: { _ in
        handled.add()
        return AgentReply(exit: 0, output: Array("slow".utf8))
      })
    for _ in 0..<3 {
      guard case .reply(let bytes) = await exchange(listener.socketPath, try AgentRequest(operation: .status).encoded()) else {
        Issue.record("no quick reply")
        return
      }
      #expect(try AgentReply.decode(bytes).output == Array("quick".utf8))
    }
    #expect(handled.value == 0)
    guard case .reply(let bytes) = await exchange(listener.socketPath, try AgentRequest(operation: .drop).encoded()) else {
      Issue.record("no reply to a request quick declined")
      return
    }
    #expect(try AgentReply.decode(bytes).output == Array("slow".utf8))
    #expect(handled.value == 1)
    #expect(quickThreads.withLock { $0.count } == 1)  // always the loop's one thread
    server.stop()
    try await task.value
  }

  /// A reply the loop sends itself into a full socket goes out whole once the peer reads, and
  /// the connection is closed after its last byte.
  @Test func theLoopsOwnReplyResumesAtAFullSocket() async throws {
    let (dir, listener) = try privateListener()
    defer { listener.close(); dir.remove() }
    let loop = try SocketLoop(
      listenFD: listener.fd, expectedUID: getuid(), maxRequestBytes: 1024, readMilliseconds: 30_000,
      idleMilliseconds: 60_000, writeMilliseconds: 30_000, log: { _ in })
    try loop.start()
    var fds: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
    defer { close(fds[1]) }
    _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
    var small: Int32 = 4096
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    let bytes = (0..<60_000).map { UInt8($0 % 251) }
    loop.state.withLock { $0.open += 1 }  // as `acceptAll` counts a connection
    loop.answer(AgentConnection(fd: fds[0], peerPID: 0), bytes)
    #expect(loop.state.withLock { $0.writes[fds[0]] != nil })  // the socket took only part
    loop.wake()
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {  // blocking reads until the loop closes its end
      let n = chunk.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, 0) }
      if n <= 0 { break }
      received += chunk[0..<n]
    }
    #expect(received == bytes)
    #expect(loop.state.withLock { $0.open } == 0)
    loop.stop()
    for await _ in loop.connections {}
  }
}
