import BrokerAgent
import BrokerWire
import Glibc
import Testing

@Suite struct AgentServerTests {
  @Test func answersRequestsUntilStopped() async throws {
    let (dir, listener) = try privateListener()
    defer { listener.close(); dir.remove() }
    let (server, task) = try serve(listener) { request in
      AgentReply(exit: 7, output: Array(request.arguments.joined(separator: " ").utf8) + [0x0A])
    }
    let request = try AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work"], config: "", input: []).encoded()
    let replies = await withTaskGroup(of: AgentClient.Exchange.self) { group in
      for _ in 0..<50 { group.addTask { await exchange(listener.socketPath, request) } }
      return await group.reduce(into: [AgentClient.Exchange]()) { $0.append($1) }
    }
    for result in replies {
      guard case .reply(let bytes) = result else {
        Issue.record("no reply: \(result)")
        continue
      }
      let reply = try AgentReply.decode(bytes)
      #expect(reply.exit == 7)
      #expect(reply.output == Array("token get work\n".utf8))
    }
    server.stop()
    try await task.value
  }

  /// A request on the forwarding socket goes to the forwarded handler, never to `quick` or the
  /// agent's own handler; the agent's socket is served as before.
  @Test func forwardedRequestsGoToTheirOwnHandler() async throws {
    let (dir, listener) = try privateListener()
    defer { listener.close(); dir.remove() }
    let forwarding = try AgentListener.openForwarding(endpoint: endpoint(in: dir.path), environment: [:])
    defer { forwarding.close() }
    let server = try AgentServer(listenFD: listener.fd, forwardFD: forwarding.fd, idleTimeout: 60, log: { _ in })
    let task = Task {
      try await server.run(quick: { _ in AgentReply(exit: 1) }, forwarded: { _ in AgentReply(exit: 2) }) { _ in AgentReply(exit: 3) }
    }
    let request = try AgentRequest(operation: .status).encoded()
    for (socket, exit) in [(forwarding.socketPath, Int32(2)), (listener.socketPath, 1)] {
      guard case .reply(let bytes) = await exchange(socket, request) else {
        Issue.record("no reply on \(socket)")
        continue
      }
      #expect(try AgentReply.decode(bytes).exit == exit, "\(socket)")
    }
    server.stop()
    try await task.value
  }

  @Test func refusesMalformedAndOversizedRequestsWithoutAnswer() async throws {
    let (dir, listener) = try privateListener()
    defer { listener.close(); dir.remove() }
    let handled = Counter()
    let (server, task) = try serve(listener) { _ in
      handled.add()
      return AgentReply(exit: 0)
    }
    #expect(await exchange(listener.socketPath, Array("v=2\nop=status\n".utf8)) == .closed)
    #expect(await exchange(listener.socketPath, Array("garbage".utf8)) == .closed)
    let big = Array("v=1\nop=status\n".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 70_000)
    let result = await exchange(listener.socketPath, big)
    #expect(result != .timedOut)
    if case .reply = result { Issue.record("an oversized request was answered") }
    #expect(handled.value == 0)
    server.stop()
    try await task.value
  }

  @Test func exitsWhenIdle() async throws {
    let (dir, listener) = try privateListener()
    defer { listener.close(); dir.remove() }
    let started = MonotonicClock.milliseconds
    let (_, task) = try serve(listener, idle: 1) { _ in AgentReply(exit: 0) }
    try await task.value
    let took = MonotonicClock.milliseconds - started
    #expect(took >= 900 && took < 30_000)
  }

  /// While the encrypted store is unlocked (`keepAlive`), idleness does not end the agent.
  @Test func keepAliveHoldsOffTheIdleExit() async throws {
    let (dir, listener) = try privateListener()
    defer { listener.close(); dir.remove() }
    let alive = Counter()
    alive.add()
    let server = try AgentServer(
      listenFD: listener.fd, idleTimeout: 1, keepAlive: { alive.value > 0 }, log: { _ in })
    let ended = Counter()
    let task = Task {
      try await server.run { _ in AgentReply(exit: 0) }
      ended.add()
    }
    try await Task.sleep(for: .milliseconds(2500))
    #expect(ended.value == 0)
    alive.reset()
    try await task.value
    #expect(ended.value == 1)
  }
}
