import BrokerAgent
import BrokerWire
import Glibc
import Testing

@Suite struct PeerCheckTests {
  @Test func socketpairPeerIsThisProcess() throws {
    var fds: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
    defer { fds.forEach { _ = close($0) } }
    let peer = try #require(PeerCheck.peer(of: fds[0]))
    #expect(peer.uid == getuid())
    #expect(peer.pid == getpid())
    #expect(PeerCheck.allows(fds[0], expectedUID: getuid()))
    #expect(!PeerCheck.allows(fds[0], expectedUID: 65534))
    #expect(PeerCheck.peer(of: -1) == nil)
  }

  /// The server itself refuses another uid: an expected uid that is not ours stands for a client of
  /// another user (the integration tests do it with a real second uid).
  @Test func serverClosesAnotherUsersConnectionUnread() async throws {
    let dir = TempDirectory()
    defer { dir.remove() }
    let listener = try AgentListener.open(endpoint: endpoint(in: dir.path), environment: [:])
    defer { listener.close() }
    let handled = Counter()
    let (server, task) = try serve(listener, expectedUID: getuid() + 1) { _ in
      handled.add()
      return AgentReply(exit: 0)
    }
    let request = try AgentRequest(operation: .status).encoded()
    let result = await exchange(listener.socketPath, request)
    #expect(result == .closed || result == .failed(ECONNRESET) || result == .failed(EPIPE))
    #expect(handled.value == 0)
    server.stop()
    try await task.value
  }
}
