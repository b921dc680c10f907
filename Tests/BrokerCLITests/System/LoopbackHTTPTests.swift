@testable import BrokerSystem
import Glibc
import Testing

/// The wire pieces both loopback servers share (the redirect listener, exec's endpoints): reading
/// a request head, choosing whom a full server closes, building a response.
struct LoopbackHTTPTests {
  /// A connected non-blocking pair: the server's end and the client's. Close-on-exec: a child
  /// another test spawns meanwhile must not hold the client's end open (no EOF would come).
  static func pair() -> (server: Int32, client: Int32) {
    var fds: [Int32] = [0, 0]
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    #expect(socketpair(AF_UNIX, type, 0, &fds) == 0)
    return (fds[0], fds[1])
  }

  /// `readHead` once `fd` is readable (up to 2 s): the end of a closed peer arrives only once every
  /// copy of its descriptor is closed, and a child that a parallel test is spawning holds copies
  /// until its exec.
  static func readHeadWaiting(_ fd: Int32, into buffer: inout [UInt8]) -> LoopbackWire.HeadRead {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    _ = poll(&p, 1, 2000)
    return LoopbackWire.readHead(fd, into: &buffer)
  }

  static func write(_ fd: Int32, _ text: [UInt8]) {
    #expect(text.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) } == text.count)
  }

  @Test func aHeadIsReadInPiecesUpToItsBlankLine() {
    let (server, client) = Self.pair()
    defer { close(server); close(client) }
    var buffer: [UInt8] = []
    #expect(LoopbackWire.readHead(server, into: &buffer) == .waiting)  // nothing sent yet
    Self.write(client, Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8))
    #expect(LoopbackWire.readHead(server, into: &buffer) == .waiting)
    Self.write(client, Array("\r\nbody".utf8))
    #expect(LoopbackWire.readHead(server, into: &buffer) == .head(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)))
  }

  @Test func aHeadOverTheCapIsTooLargeAndAClosedPeerIsClosed() {
    let (server, client) = Self.pair()
    defer { close(server) }
    Self.write(client, [UInt8](repeating: UInt8(ascii: "a"), count: LoopbackWire.maxHead + 1))
    var buffer: [UInt8] = []
    var result = LoopbackWire.HeadRead.waiting
    for _ in 0..<16 where result == .waiting { result = Self.readHeadWaiting(server, into: &buffer) }
    #expect(result == .tooLarge)
    close(client)
    var rest: [UInt8] = []
    var end = LoopbackWire.HeadRead.waiting
    for _ in 0..<16 where end == .waiting { end = Self.readHeadWaiting(server, into: &rest) }
    #expect(end == .closed)
  }

  @Test func aFullServerClosesTheConnectionWaitingLongest() {
    #expect(LoopbackWire.longestWaiting([(key: 1, deadline: 9.0), (key: 2, deadline: 3.0), (key: 3, deadline: 5.0)]) == 2)
    #expect(LoopbackWire.longestWaiting([(key: Int, deadline: Double)]()) == nil)
  }

  @Test func aHeadIsCompleteAtItsBlankLine() {
    let head = Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8)
    #expect(LoopbackWire.frameHead([], ended: false) == .more)
    #expect(LoopbackWire.frameHead(head, ended: false) == .more)
    #expect(LoopbackWire.frameHead(head + Array("\r\nbody".utf8), ended: false) == .complete(head + [13, 10]))
  }

  @Test func aHeadOverTheCapIsTooLargeAndAPeerEndingBeforeItIsClosed() {
    let long = [UInt8](repeating: UInt8(ascii: "a"), count: LoopbackWire.maxHead + 1)
    #expect(LoopbackWire.frameHead(long, ended: false) == .tooLarge)
    #expect(LoopbackWire.frameHead(Array("GET / HTTP/1.1\r\n".utf8), ended: true) == .closed)
  }

  @Test func aResponseClosesAndIsNeverCached() {
    let wire = LoopbackWire.response(
      status: 404, contentType: "text/plain", headers: [("Metadata-Flavor", "Google")], body: Array("no".utf8))
    #expect(
      String(decoding: wire, as: UTF8.self)
        == "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nMetadata-Flavor: Google\r\n"
        + "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nno")
    let head = LoopbackWire.response(status: 200, page: "<p>", includeBody: false)
    let text = String(decoding: head, as: UTF8.self)
    #expect(text.hasSuffix("Connection: close\r\n\r\n") && text.contains("Content-Length: 3\r\n"))
    #expect(text.contains("Referrer-Policy: no-referrer\r\n") && text.contains("Content-Security-Policy: default-src 'none'"))
  }
}
