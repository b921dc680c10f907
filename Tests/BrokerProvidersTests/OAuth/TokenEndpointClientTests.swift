import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// Retries, backoff and reply classification of the shared token-endpoint client.
@Suite struct TokenEndpointClientTests {
  func client(_ transport: FakeTransport, _ time: FakeTime) -> TokenEndpointClient {
    TokenEndpointClient(transport: transport, time: time, caFiles: ["/etc/ca.pem"])
  }
  let fields = [("grant_type", "refresh_token"), ("refresh_token", "RT-SENTINEL")]

  @Test func retriesA503HonouringRetryAfter() async throws {
    let time = FakeTime()
    let transport = FakeTransport([
      .json(#"{"error":"temporarily_unavailable"}"#, status: 503, headers: [HTTPHeader("Retry-After", "7")]),
      .json(#"{"access_token":"AT"}"#),
    ])
    let reply = try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, secrets: ["RT-SENTINEL"])
    guard case .success = reply else { Issue.record("expected success"); return }
    #expect(time.sleeps == [7])
    #expect(transport.requests.count == 2)
    #expect(transport.requests[0].caFiles == ["/etc/ca.pem"])
    #expect(transport.requests[0].method == "POST")
    #expect(transport.requests[0].headers.contains(HTTPHeader("Content-Type", "application/x-www-form-urlencoded")))
  }

  @Test func retryAfterIsCapped() async throws {
    let time = FakeTime()
    let transport = FakeTransport([
      .json("{}", status: 429, headers: [HTTPHeader("Retry-After", "3600")]), .json(#"{"access_token":"AT"}"#),
    ])
    _ = try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, secrets: [])
    #expect(time.sleeps == [30])
  }

  @Test func gives502HTMLPagesThreeTriesThenUnavailable() async throws {
    let time = FakeTime()
    let transport = FakeTransport { _, _ in
      HTTPResponse(status: 502, headers: [HTTPHeader("Content-Type", "text/html")], body: Array("<html><body>Bad Gateway</body></html>".utf8))
    }
    let error = await #expect(throws: ProviderError.self) {
      try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, secrets: [])
    }
    #expect(error == .unavailable(host: "login.microsoftonline.com", detail: "HTTP 502 after 3 attempts; try again later"))
    #expect(time.sleeps == [1, 2])
    #expect(transport.requests.count == 3)
  }

  @Test func proxyPageWithA4xxStatusIsUnavailableNotAnOAuthError() async throws {
    let time = FakeTime()
    let transport = FakeTransport([.text("<html>Proxy Authentication Required</html>", status: 407)])
    let error = await #expect(throws: ProviderError.self) {
      try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, secrets: [])
    }
    guard case .unavailable(_, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(detail.contains("proxy"))
    #expect(transport.requests.count == 1)
  }

  @Test func oauthErrorsAreNeverRetried() async throws {
    let time = FakeTime()
    let transport = FakeTransport([Fixtures.oauthError("invalid_grant", codes: [50173])])
    let reply = try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, secrets: [])
    guard case .error(let e) = reply else { Issue.record("expected an error reply"); return }
    #expect(e.error == "invalid_grant")
    #expect(e.codes == ["AADSTS50173"])
    #expect(time.sleeps.isEmpty)
    #expect(transport.requests.count == 1)
  }

  @Test func networkFailuresAreRetriedWithBackoff() async throws {
    let time = FakeTime()
    let transport = FakeTransport([
      .failure(.timedOut(host: "login.microsoftonline.com")), .failure(.cannotConnect(host: "login.microsoftonline.com")),
      .json(#"{"access_token":"AT"}"#),
    ])
    _ = try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, secrets: [])
    #expect(time.sleeps == [1, 2])
  }

  @Test func tlsFailuresAreNotRetried() async throws {
    let time = FakeTime()
    let tls = HTTPError.tls(host: "login.microsoftonline.com", detail: "unknown CA")
    let transport = FakeTransport([.failure(tls)])
    await #expect(throws: ProviderError.unavailable(host: "login.microsoftonline.com", detail: tls.description)) {
      try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, secrets: [])
    }
    #expect(transport.requests.count == 1)
  }
}
