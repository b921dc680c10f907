@testable import BrokerSystem
import Testing

/// The wire pieces both loopback servers share (the redirect listener, exec's endpoints): cutting
/// a request head out of what was read, building a response.
struct LoopbackHTTPTests {
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
