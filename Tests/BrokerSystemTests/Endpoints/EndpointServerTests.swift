@testable import BrokerSystem
import Glibc
import Synchronization
import Testing

/// The SDK endpoints' loopback server against real sockets: own-uid connections answered, one
/// slow handler or client never stalls another, bounded heads, a foreign Host refused, closed on
/// stop. (Another uid's connection is refused, and idle clients under a low descriptor limit:
/// Tests/Integration/test_exec.py.)
@Suite(.serialized) struct EndpointServerTests {
  /// `/slow` waits until `/release` was asked; everything else answers at once.
  final class Gate: Sendable {
    let released = Mutex(false)
    func handler(_ r: LoopbackRequest) async -> EndpointReply {
      if r.path == "/release" { released.withLock { $0 = true } }
      if r.path == "/slow" {
        while !released.withLock({ $0 }) { try? await Task.sleep(nanoseconds: 10_000_000) }
      }
      return .text(200, "path=\(r.path) flavor=\(r.header("Metadata-Flavor") ?? "-")", headers: [("Metadata-Flavor", "Google")])
    }
  }

  @Test func connectionsLeaveDescriptorsForTheTokenFetch() {
    #expect(EndpointServer.connectionLimit(descriptors: 1024) == 480)
    #expect(EndpointServer.connectionLimit(descriptors: 128) == 32)
    #expect(EndpointServer.connectionLimit(descriptors: 524_288) == 512)
    #expect(EndpointServer.connectionLimit(descriptors: 20) == 8)
    #expect(EndpointServer.connectionLimit(descriptors: rlim_t.max) == 512)
  }

  @Test func answersEachRequestInItsOwnTaskWhileASlowOneWaits() async throws {
    let server = try EndpointServer()
    let port = server.port
    let gate = Gate()
    let serving = Task { try await server.serve(handler: gate.handler) }
    let slow = Task { await LoopbackTestClient.asyncGet(port: port, "/slow") }
    let fast = await LoopbackTestClient.asyncExchange(
      port: port, raw: "GET /fast HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nMetadata-Flavor: Google\r\n\r\n")
    #expect(fast?.status == 200)
    #expect(fast?.text.contains("path=/fast flavor=Google") == true)
    #expect(fast?.text.contains("Metadata-Flavor: Google\r\n") == true)
    #expect(fast?.text.contains("Connection: close\r\n") == true)
    #expect(await LoopbackTestClient.asyncGet(port: port, "/release")?.status == 200)
    #expect(await slow.value?.status == 200)
    server.stop()
    try await serving.value
    #expect(LoopbackTestClient.nothingListens(port: port))  // closed with serve
  }

  @Test func oversizedHeadsSlowClientsAndForeignHostsDoNotStallIt() async throws {
    let server = try EndpointServer()
    let port = server.port
    let serving = Task { try await server.serve(handler: Gate().handler) }
    // A client that connects and sends half a head holds no one up.
    let idle = LoopbackTestClient.connect(port: port)
    #expect(idle != nil)
    _ = "GET / HTTP/1.1\r\n".withCString { send(idle!, $0, 16, Int32(MSG_NOSIGNAL)) }
    let big = "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Big: \(String(repeating: "a", count: 20000))\r\n\r\n"
    #expect(await LoopbackTestClient.asyncExchange(port: port, raw: big)?.status == 431)
    #expect(await LoopbackTestClient.asyncGet(port: port, "/", host: "evil.example:\(port)")?.status == 400)
    #expect(await LoopbackTestClient.asyncGet(port: port, "/", host: "localhost:\(port)")?.status == 200)
    #expect(await LoopbackTestClient.asyncExchange(port: port, raw: "NONSENSE\r\n\r\n")?.status == 400)
    let head = await LoopbackTestClient.asyncGet(port: port, "/", method: "HEAD")
    #expect(head?.text.hasSuffix("\r\n\r\n") == true)
    close(idle!)
    server.stop()
    try await serving.value
  }
}
