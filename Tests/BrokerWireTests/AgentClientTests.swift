import BrokerWire
import Foundation
import Glibc
import Synchronization
import Testing

@Suite struct AgentClientTests {
  @Test func noAgentIsAbsentNotAFailure() {
    #expect(AgentClient.connect(to: "/nonexistent/tokenbroker/agent.sock") == .absent)
    #expect(AgentClient.connect(to: "/" + String(repeating: "x", count: 200)) == .failed(ENAMETOOLONG))
  }

  private func pair() -> (Int32, Int32) {
    var fds: [Int32] = [-1, -1]
    // Close-on-exec: a child another test spawns meanwhile must not hold an end open.
    _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
    return (fds[0], fds[1])
  }

  @Test func exchangeSendsShutsDownAndReadsToTheEnd() async {
    let (client, server) = pair()
    defer { close(client) }
    #expect(AgentClient.exchange(fd: client, request: Array("v=1\nop=status\n".utf8), timeoutMilliseconds: 0) == .timedOut)
    let reply = Array("v=1\nexit=0\n".utf8)
    // The agent's side, on its own thread (a blocking read must not sit on the cooperative pool,
    // which the blocking exchange below also occupies): read the request to its end (the
    // client's shutdown), answer, close.
    let received = Mutex<[UInt8]>([])
    let agent = Thread {
      var request: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 1024)
      while true {
        let n = chunk.withUnsafeMutableBytes { read(server, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        request += chunk[0..<n]
      }
      received.withLock { $0 = request }
      _ = reply.withUnsafeBytes { write(server, $0.baseAddress, $0.count) }
      close(server)
    }
    agent.start()
    #expect(AgentClient.exchange(fd: client, request: Array("v=1\nop=status\n".utf8), timeoutMilliseconds: 30000) == .reply(reply))
    #expect(received.withLock { $0 } == Array("v=1\nop=status\n".utf8))
  }

  @Test func closedWithoutAReplyAndSilentAgentsAreTold() {
    let (client, server) = pair()
    close(server)
    #expect(AgentClient.exchange(fd: client, request: Array("v=1\nop=status\n".utf8), timeoutMilliseconds: 2000) == .closed)
    close(client)
    let (quiet, peer) = pair()
    defer { close(quiet); close(peer) }
    let start = MonotonicClock.milliseconds
    #expect(AgentClient.exchange(fd: quiet, request: Array("v=1\nop=status\n".utf8), timeoutMilliseconds: 200) == .timedOut)
    #expect(MonotonicClock.milliseconds - start >= 190)
  }
}
