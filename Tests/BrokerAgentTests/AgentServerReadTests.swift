@testable import BrokerAgent
import BrokerWire
import Glibc
import Synchronization
import Testing

/// The agent's server reads each request on its loop's thread: the phases a quick client never
/// shows (a request in pieces, a stop mid-request) are made here on purpose.
@Suite struct AgentServerReadTests {
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

}
