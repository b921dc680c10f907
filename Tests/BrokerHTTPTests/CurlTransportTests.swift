import BrokerCore
import CBrokerShims
import Foundation
import Testing

@testable import BrokerHTTP

/// Real libcurl against the local Python servers (Fixtures/TestServer.swift).
@Suite struct CurlTransportTests {
  let server: TestServer
  let transport = CurlTransport()

  init() throws { server = try TestServer.get() }

  func https(_ path: String) -> String { "https://127.0.0.1:\(server.https)\(path)" }
  func http(_ path: String) -> String { "http://127.0.0.1:\(server.http)\(path)" }

  @Test func jsonReplyWithHeaders() async throws {
    let reply = try await transport.send(
      HTTPRequest(method: "GET", url: https("/json?x=1"), caFiles: [server.caFile]))
    #expect(reply.status == 200)
    #expect(reply.header("content-type") == "application/json")
    #expect(reply.header("X-TEST") == "two")
    #expect(reply.headers.filter { $0.name == "X-Test" }.map(\.value) == ["one", "two"])
    #expect(String(decoding: reply.body, as: UTF8.self) == #"{"ok":true}"#)
  }

  @Test func serviceUnavailableIsAResponseWithRetryAfter() async throws {
    let reply = try await transport.send(
      HTTPRequest(method: "GET", url: https("/unavailable"), caFiles: [server.caFile]))
    #expect(reply.status == 503)
    #expect(reply.header("Retry-After") == "7")
    #expect(reply.body == Array("busy".utf8))
  }

  @Test func tlsWithoutTheTestCAFailsAsTLS() async throws {
    do {
      _ = try await transport.send(HTTPRequest(method: "GET", url: https("/json")))
      Issue.record("a server certificate from an unknown CA was accepted")
    } catch {
      guard case .tls(let host, let detail) = error else {
        Issue.record("expected .tls, got \(error)")
        return
      }
      #expect(host == "127.0.0.1")
      #expect(!detail.isEmpty)
    }
  }

  @Test func localhostNameMatchesTheCertificate() async throws {
    let reply = try await transport.send(
      HTTPRequest(method: "GET", url: "https://localhost:\(server.https)/json", caFiles: [server.caFile]))
    #expect(reply.status == 200)
  }

  @Test func plainHTTPToLoopbackWorks() async throws {
    let reply = try await transport.send(HTTPRequest(method: "GET", url: http("/json")))
    #expect(reply.status == 200)
    #expect(reply.header("Content-Type") == "application/json")
  }

  @Test func plainHTTPToARemoteHostIsRefused() async throws {
    await #expect(throws: HTTPError.insecureURL(host: "example.com")) {
      try await transport.send(HTTPRequest(method: "GET", url: "http://example.com/token"))
    }
  }

  @Test func connectionRefusedIsCannotConnect() async throws {
    await #expect(throws: HTTPError.cannotConnect(host: "127.0.0.1")) {
      try await transport.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(server.dead)/"))
    }
  }

  @Test func silentServerTimesOut() async throws {
    let start = ContinuousClock.now
    await #expect(throws: HTTPError.timedOut(host: "127.0.0.1")) {
      try await transport.send(
        HTTPRequest(method: "GET", url: "http://127.0.0.1:\(server.silent)/", totalTimeout: 1))
    }
    // Does not hang: the 1 s timeout holds, with room for a loaded machine (15.4 s was seen at a
    // load of 17 on 2 cores).
    #expect(ContinuousClock.now - start < .seconds(60))
  }

  @Test func formPostBodyArrivesIntact() async throws {
    let fields = [("grant_type", "refresh_token"), ("refresh_token", "a b&c=d/é+%"), ("scope", "")]
    let reply = try await transport.send(
      HTTPRequest.form(url: https("/echo"), fields: fields, caFiles: [server.caFile]))
    #expect(reply.status == 200)
    #expect(reply.header("X-Method") == "POST")
    #expect(reply.header("X-Content-Type") == "application/x-www-form-urlencoded")
    #expect(reply.body == Array(FormEncoding.encode(fields).utf8))
  }

  @Test func binaryBodyAndOtherMethods() async throws {
    let body: [UInt8] = [0, 1, 2, 0xFF, 0, 10, 13]
    let reply = try await transport.send(HTTPRequest(method: "PUT", url: http("/echo"), body: body))
    #expect(reply.header("X-Method") == "PUT")
    #expect(reply.body == body)
    let empty = try await transport.send(HTTPRequest(method: "POST", url: http("/echo")))
    #expect(empty.status == 200 && empty.body.isEmpty)
    let head = try await transport.send(HTTPRequest(method: "HEAD", url: http("/json")))
    #expect(head.status == 200 && head.body.isEmpty)
  }

  @Test func requestHeadersAndUserAgentAreSent() async throws {
    let reply = try await transport.send(
      HTTPRequest(method: "GET", url: http("/headers"), headers: [HTTPHeader("X-Custom", "v 1"), HTTPHeader("X-Empty", "")]))
    let seen = try JSONDecoder().decode([[String]].self, from: Data(reply.body))
    #expect(seen.contains(["user-agent", "tokenbroker"]))
    #expect(seen.contains(["x-custom", "v 1"]))
    #expect(seen.contains(["x-empty", ""]))
    #expect(!seen.contains { $0.first == "expect" })
  }

  @Test func redirectsAreReturnedNotFollowed() async throws {
    let reply = try await transport.send(HTTPRequest(method: "GET", url: http("/redirect")))
    #expect(reply.status == 302)
    #expect(reply.header("Location") == "/json")
  }

  @Test func onlyTheFinalHeaderBlockIsKept() async throws {
    let reply = try await transport.send(HTTPRequest(method: "GET", url: http("/interim")))
    #expect(reply.status == 200)
    #expect(reply.header("X-Final") == "yes")
    #expect(reply.header("X-Interim") == nil)
  }

  @Test func replyOverFourMiBIsRefused() async throws {
    do {
      _ = try await transport.send(HTTPRequest(method: "GET", url: http("/big")))
      Issue.record("a 5 MiB reply was accepted")
    } catch {
      guard case .other("127.0.0.1", let detail) = error else { Issue.record("got \(error)"); return }
      #expect(detail.contains("reply too large"))
    }
  }

  @Test func unreadableCAFileIsNamed() async throws {
    do {
      _ = try await transport.send(
        HTTPRequest(method: "GET", url: https("/json"), caFiles: ["/nonexistent/ca.pem"]))
      Issue.record("a missing CA file was ignored")
    } catch {
      guard case .caFile(let path, _) = error else { Issue.record("got \(error)"); return }
      #expect(path == "/nonexistent/ca.pem")
      #expect(error.description.contains("ca-file"))
    }
  }

  @Test func twentyConcurrentRequestsRunInParallel() async throws {
    let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<20 {
        group.addTask {
          try await transport.send(
            HTTPRequest(method: "GET", url: https("/together"), connectTimeout: 60, totalTimeout: 90, caFiles: [server.caFile])
          ).status
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    // The server answers only once all 20 are in flight at the same time (504 otherwise).
    #expect(statuses == Array(repeating: 200, count: 20))
  }

  @Test func cancellingTheTaskAbortsTheTransfer() async throws {
    let start = ContinuousClock.now
    let task = Task {
      try await transport.send(
        HTTPRequest(method: "GET", url: "http://127.0.0.1:\(server.silent)/", totalTimeout: 60))
    }
    try await Task.sleep(for: .milliseconds(300))
    task.cancel()
    await #expect(throws: HTTPError.other(host: "127.0.0.1", detail: "request cancelled")) {
      try await task.value
    }
    #expect(ContinuousClock.now - start < .seconds(30))
  }

  /// The agent gives back the process's code pages after a refresh: requests after that (TLS, so
  /// OpenSSL's code runs again from the dropped pages) work as before, again and again. (That the
  /// pages do leave the agent's resident set: Tests/Integration/test_agent_memory.py; here other
  /// tests' agent handlers release them too, so the count of bytes is not this test's to check.)
  @Test func requestsWorkAfterTheCodePagesAreGivenBack() async throws {
    for _ in 0..<3 {
      let reply = try await transport.send(
        HTTPRequest(method: "GET", url: https("/json"), caFiles: [server.caFile]))
      #expect(reply.status == 200)
      cbroker_code_pages_release()
    }
  }

  @Test func libraryVersionNamesLibcurlAndTLS() {
    #expect(CurlTransport.libraryVersion.hasPrefix("libcurl/"))
    #expect(CurlTransport.libraryVersion.contains(" "))
  }
}
