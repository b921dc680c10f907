import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// Retries, backoff and reply classification of the shared token-endpoint client.
@Suite struct TokenEndpointClientTests {
  func client(_ transport: FakeTransport, _ time: FakeTime) -> TokenEndpointClient {
    TokenEndpointClient(transport: transport, time: time, caFiles: ["/etc/ca.pem"], account: "work")
  }
  let fields = [("grant_type", "refresh_token"), ("refresh_token", "RT-SENTINEL")]
  let app = ClientAuthentication.publicClient("app")

  @Test func retriesA503HonouringRetryAfter() async throws {
    let time = FakeTime()
    let transport = FakeTransport([
      .json(#"{"error":"temporarily_unavailable"}"#, status: 503, headers: [HTTPHeader("Retry-After", "7")]),
      .json(#"{"access_token":"AT"}"#),
    ])
    let reply = try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: ["RT-SENTINEL"])
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
      .json("{}", status: 503, headers: [HTTPHeader("Retry-After", "3600")]), .json(#"{"access_token":"AT"}"#),
    ])
    _ = try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
    #expect(time.sleeps == [30])
  }

  /// X07: retrying a 429 at once prolongs the throttle; the caller gets the server's wait.
  @Test func X07_a429IsNotRetried() async throws {
    for (headers, seconds) in [([HTTPHeader("Retry-After", "3600")], 3600), ([], ThrottleWait.defaultSeconds)] {
      let time = FakeTime()
      let transport = FakeTransport([.json("{}", status: 429, headers: headers), .json(#"{"access_token":"AT"}"#)])
      let error = await #expect(throws: ProviderError.self) {
        try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
      }
      #expect(error == .throttled(account: "work", host: "login.microsoftonline.com", seconds: seconds, reason: "HTTP 429"))
      #expect(transport.requests.count == 1)
      #expect(time.sleeps.isEmpty)
    }
  }

  @Test func gives502HTMLPagesThreeTriesThenUnavailable() async throws {
    let time = FakeTime()
    let transport = FakeTransport { _, _ in
      HTTPResponse(status: 502, headers: [HTTPHeader("Content-Type", "text/html")], body: Array("<html><body>Bad Gateway</body></html>".utf8))
    }
    let error = await #expect(throws: ProviderError.self) {
      try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
    }
    #expect(error == .unavailable(host: "login.microsoftonline.com", detail: "HTTP 502 after 3 attempts; try again later"))
    #expect(time.sleeps == [1, 2])
    #expect(transport.requests.count == 3)
  }

  @Test func proxyPageWithA4xxStatusIsUnavailableNotAnOAuthError() async throws {
    let time = FakeTime()
    let transport = FakeTransport([.text("<html>Proxy Authentication Required</html>", status: 407)])
    let error = await #expect(throws: ProviderError.self) {
      try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
    }
    guard case .unavailable(_, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(detail.contains("proxy"))
    #expect(transport.requests.count == 1)
  }

  @Test func oauthErrorsAreNeverRetried() async throws {
    let time = FakeTime()
    let transport = FakeTransport([Fixtures.oauthError("invalid_grant", codes: [50173])])
    let reply = try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
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
    _ = try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
    #expect(time.sleeps == [1, 2])
  }

  @Test func tlsFailuresAreNotRetried() async throws {
    let time = FakeTime()
    let tls = HTTPError.tls(host: "login.microsoftonline.com", detail: "unknown CA")
    let transport = FakeTransport([.failure(tls)])
    await #expect(throws: ProviderError.unavailable(host: "login.microsoftonline.com", detail: tls.description)) {
      try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
    }
    #expect(transport.requests.count == 1)
  }

  /// libcurl is loaded at the first request: when it cannot be, no request can be made at all, so
  /// the loader's own message (what to install) reaches the user, once, not as the provider's fault.
  @Test func aMissingHTTPLibraryIsNotRetriedNorBlamedOnTheProvider() async throws {
    let time = FakeTime()
    let missing = HTTPError.libraryUnavailable(detail: "libcurl.so.4: cannot open shared object file")
    let transport = FakeTransport([.failure(missing)])
    await #expect(throws: missing) {
      try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
    }
    #expect(transport.requests.count == 1)
    #expect(time.sleeps.isEmpty)
  }

  /// interface.md §6: a 400 or 401 without an OAuth error body (Glewlwyd's answer to a dead refresh
  /// token) names the status and the host and points at `login`; it is not a network problem.
  @Test(arguments: [400, 401]) func aBare4xxIsARefusalNotANetworkProblem(status: Int) async throws {
    let time = FakeTime()
    let transport = FakeTransport([.text("", status: status, contentType: "text/plain")])
    let error = await #expect(throws: ProviderError.self) {
      try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
    }
    #expect(error == .refusedWithoutReason(account: "work", host: "login.microsoftonline.com", status: status))
    let text = error?.description ?? ""
    #expect(text.contains("HTTP \(status)") && text.contains("login.microsoftonline.com"))
    #expect(text.contains("tokenbroker login work") && !text.contains("proxy"))
    #expect(transport.requests.count == 1)
  }

  /// X06: a 200 HTML page (a proxy's interstitial) is named with its content type, once.
  @Test func test_X06_a200HTMLPageIsStrayWithItsContentType() async throws {
    let time = FakeTime()
    let transport = FakeTransport([.text("<html>Zscaler</html>", status: 200, contentType: "text/html; charset=UTF-8")])
    let error = await #expect(throws: ProviderError.self) {
      try await client(transport, time).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
    }
    #expect(
      error == .unavailable(
        host: "login.microsoftonline.com",
        detail: "unexpected reply from login.microsoftonline.com (HTTP 200, text/html, not JSON); "
          + "a proxy or portal may be intercepting"))
    #expect(transport.requests.count == 1)
  }

  /// X06: a redirect is never followed and names where it pointed, never its query.
  @Test(arguments: [302, 307, 308]) func test_X06_aRedirectIsStrayAndNamesItsTarget(status: Int) async throws {
    let transport = FakeTransport([
      .response(
        HTTPResponse(
          status: status, headers: [HTTPHeader("Location", "https://gateway.zscloud.net/auD?origurl=RT-SENTINEL")], body: []))
    ])
    let outcome = try await client(transport, FakeTime()).exchange(
      url: Fixtures.tokenURL, fields: fields, client: app, secrets: ["RT-SENTINEL"])
    guard case .stray(let got, let error) = outcome else { Issue.record("got \(outcome)"); return }
    #expect(got == status)
    #expect(error.description.contains("a redirect to gateway.zscloud.net, not followed"))
    #expect(!error.description.contains("RT-SENTINEL") && !error.description.contains("origurl"))
    #expect(transport.requests.count == 1)
  }

  /// X06: JSON served as text/plain is JSON; revocation takes any 2xx body.
  @Test func test_X06_theBodyNotTheContentTypeDecidesJSON() async throws {
    let transport = FakeTransport([
      .text(#"{"access_token":"AT"}"#, status: 200, contentType: "text/plain"), .text("OK", status: 200, contentType: "text/plain"),
    ])
    let c = client(transport, FakeTime())
    guard case .success = try await c.post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: []) else {
      Issue.record("expected success"); return
    }
    guard case .success = try await c.post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [], expectsJSON: false)
    else { Issue.record("expected success"); return }
  }

  /// golang/oauth2: "some unorthodox servers respond 200 in error case".
  @Test func a200CarryingAnErrorIsAnError() async throws {
    let transport = FakeTransport([.json(#"{"error":"invalid_grant"}"#)])
    let reply = try await client(transport, FakeTime()).post(url: Fixtures.tokenURL, fields: fields, client: app, secrets: [])
    guard case .error(let e) = reply else { Issue.record("expected an error reply"); return }
    #expect(e.error == "invalid_grant")
  }

  @Test func basicAuthenticationGoesInTheHeaderAndNotTheBody() async throws {
    let transport = FakeTransport([.json(#"{"access_token":"AT"}"#)])
    let auth = ClientAuthentication(clientID: "my app", secret: Secret("s:e%c+r/t"), method: .clientSecretBasic)
    _ = try await client(transport, FakeTime()).post(url: Fixtures.tokenURL, fields: fields, client: auth, secrets: [])
    let request = transport.requests[0]
    #expect(request.headers.contains(HTTPHeader("Authorization", "Basic " + ClientAuthentication.basicCredentials(id: "my app", secret: Secret("s:e%c+r/t")))))
    #expect(request.formFields["client_id"] == nil && request.formFields["client_secret"] == nil)
  }

  @Test func aSecretEchoedInAnErrorIsRedacted() async throws {
    let transport = FakeTransport([.json(#"{"error":"invalid_client","error_description":"bad secret S3CRET-VALUE"}"#, status: 401)])
    let auth = ClientAuthentication(clientID: "app", secret: Secret("S3CRET-VALUE"), method: .clientSecretPost)
    let reply = try await client(transport, FakeTime()).post(url: Fixtures.tokenURL, fields: fields, client: auth, secrets: [])
    guard case .error(let e) = reply else { Issue.record("expected an error reply"); return }
    #expect(!(e.detailLine ?? "").contains("S3CRET"))
  }
}
