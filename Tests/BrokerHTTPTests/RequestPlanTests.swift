import BrokerCore
import Testing

@testable import BrokerHTTP

@Suite struct RequestPlanTests {
  func plan(_ request: HTTPRequest) throws(HTTPError) -> RequestPlan {
    try RequestPlan(request, userAgent: "tokenbroker")
  }

  @Test(arguments: [
    ("http://example.com/token", HTTPError.insecureURL(host: "example.com")),
    ("http://10.0.0.1:8080/", .insecureURL(host: "10.0.0.1")),
    ("ftp://example.com/x?code=secret", .invalidURL("ftp://example.com/x")),
    ("https://user:pw@example.com/x?code=secret#frag", .invalidURL("https://example.com/x")),
    ("https://example.com/a b", .invalidURL("https://example.com/a b")),
    ("file:///etc/passwd", .invalidURL("file:///etc/passwd")),
  ])
  func refusedBeforeAnyCurlCall(url: String, expected: HTTPError) {
    #expect(throws: expected) { try plan(HTTPRequest(method: "GET", url: url)) }
  }

  @Test(arguments: ["http://127.0.0.1:8080/x", "http://localhost/x", "http://[::1]:9/x", "https://example.com/x"])
  func acceptedURLs(url: String) throws {
    let p = try plan(HTTPRequest(method: "GET", url: url))
    #expect(p.bypassProxy == (EndpointURL(url)?.isLoopback ?? false))
  }

  @Test func headerLineBreaksAreRefusedWithoutEchoingTheValue() {
    do {
      _ = try plan(
        HTTPRequest(method: "GET", url: "https://example.com/", headers: [HTTPHeader("Authorization", "Bearer s3cret\r\nX: y")]))
      Issue.record("a header with CRLF was accepted")
    } catch {
      #expect(error == .other(host: "example.com", detail: "request header 'Authorization' holds a line break"))
      #expect(!error.description.contains("s3cret"))
    }
  }

  @Test func badMethodAndHeaderNameAreRefused() {
    #expect(throws: HTTPError.self) { try plan(HTTPRequest(method: "GET /x HTTP/1.1\r\n", url: "https://example.com/")) }
    #expect(throws: HTTPError.self) {
      try plan(HTTPRequest(method: "GET", url: "https://example.com/", headers: [HTTPHeader("Bad Name", "v")]))
    }
  }

  @Test func methodsBodiesAndTimeouts() throws {
    let get = try plan(HTTPRequest(method: "get", url: "https://example.com/", connectTimeout: 0, totalTimeout: -5))
    #expect(get.body == .none && get.customMethod == nil)
    #expect(get.connectTimeout == 1 && get.totalTimeout == 1)
    let post = try plan(HTTPRequest(method: "POST", url: "https://example.com/", body: [1, 2]))
    #expect(post.body == .bytes([1, 2]) && post.customMethod == nil)
    let delete = try plan(HTTPRequest(method: "DELETE", url: "https://example.com/"))
    #expect(delete.customMethod == "DELETE")
    #expect(try plan(HTTPRequest(method: "HEAD", url: "https://example.com/")).body == .head)
  }

  @Test func headerLines() throws {
    let p = try plan(
      HTTPRequest(method: "GET", url: "https://example.com/", headers: [HTTPHeader("Accept", "application/json"), HTTPHeader("X-Empty", "")]))
    #expect(p.headerLines == ["Accept: application/json", "X-Empty;", "Expect:"])
    let own = try plan(HTTPRequest(method: "GET", url: "https://example.com/", headers: [HTTPHeader("Expect", "100-continue")]))
    #expect(own.headerLines == ["Expect: 100-continue"])
  }

  @Test func userAgentLosesControlCharacters() {
    #expect(CurlTransport(userAgent: "tb\r\nX-Evil: 1").userAgent == "tbX-Evil: 1")
  }
}
