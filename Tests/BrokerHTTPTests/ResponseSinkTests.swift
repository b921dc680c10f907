import BrokerCore
import Testing

@testable import BrokerHTTP

@Suite struct ResponseSinkTests {
  @Test func keepsOnlyTheFinalBlockAndUnfoldsContinuations() {
    let sink = ResponseSink(limit: 10, cancel: CancelFlag())
    for line in [
      "HTTP/1.1 200 Connection established\r\n", "Proxy-Agent: x\r\n", "\r\n",
      "HTTP/1.1 100 Continue\r\n", "\r\n",
      "HTTP/2 200\r\n", "content-type: application/json\r\n", "X-Long: a\r\n", "\t b\r\n",
      "Retry-After:7\r\n", "no colon here\r\n", "\r\n",
    ] {
      sink.addHeaderLine(line)
    }
    #expect(sink.headers == [HTTPHeader("content-type", "application/json"), HTTPHeader("X-Long", "a b"), HTTPHeader("Retry-After", "7")])
  }

  @Test func bodyStopsAtTheLimit() {
    let sink = ResponseSink(limit: 4, cancel: CancelFlag())
    let ok = [UInt8]("abc".utf8).withUnsafeBytes { sink.appendBody($0) }
    let over = [UInt8]("de".utf8).withUnsafeBytes { sink.appendBody($0) }
    #expect(ok && !over && sink.tooLarge)
    #expect(sink.body == Array("abc".utf8))
  }
}
