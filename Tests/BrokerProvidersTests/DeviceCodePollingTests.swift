import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// RFC 8628 §3.4–3.5 polling through the Azure device flow (bug-cases.md B27).
@Suite struct DeviceCodePollingTests {
  let scopes = ScopeSet([Fixtures.graph])

  func authorization(interval: Int = 5, expiresIn: Int = 120) -> DeviceAuthorization {
    DeviceAuthorization(
      deviceCode: Secret("DC-SENTINEL-1"), userCode: "ABCD-EFGH", verificationURI: "https://microsoft.com/devicelogin",
      expiresIn: expiresIn, interval: interval, issuedAt: Fixtures.start)
  }

  @Test func slowDownAddsFiveSecondsOrTakesTheServersInterval() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([
      Fixtures.oauthError("authorization_pending", codes: [70016]),
      Fixtures.oauthError("slow_down"),
      Fixtures.oauthError("slow_down", extra: #","interval":15"#),
      Fixtures.oauthError("authorization_pending", codes: [70016]),
      Fixtures.tokenReply(idToken: Fixtures.idToken),
    ])
    let grant = try await Fixtures.provider(transport, time)
      .pollDeviceAuthorization(authorization(), scopes: scopes, timeout: 300)
    #expect(time.sleeps == [5, 10, 15, 15])
    #expect(grant.accessToken == Secret("AT2"))
    #expect(grant.refreshToken == Secret("RT2"))
    #expect(grant.identity?.username == "user1@example.test")
    #expect(transport.requests.count == 5)
    let fields = transport.requests[0].formFields
    #expect(transport.requests[0].url == Fixtures.tokenURL)
    #expect(fields["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code")
    #expect(fields["client_id"] == Fixtures.account().clientID)
    #expect(fields["device_code"] == "DC-SENTINEL-1")
    #expect(fields["client_secret"] == nil)
  }

  @Test func slowDownWithASmallerServerIntervalStillAddsFive() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([
      Fixtures.oauthError("slow_down", extra: #","interval":"2""#), Fixtures.tokenReply(),
    ])
    _ = try await Fixtures.provider(transport, time).pollDeviceAuthorization(authorization(), scopes: scopes, timeout: 300)
    #expect(time.sleeps == [10])
  }

  @Test func slowDownSentWith429IsStillSlowDown() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([Fixtures.oauthError("slow_down", status: 429), Fixtures.tokenReply()])
    _ = try await Fixtures.provider(transport, time).pollDeviceAuthorization(authorization(), scopes: scopes, timeout: 300)
    #expect(time.sleeps == [10])
  }

  /// X07: Auth0 and Okta throttle polling with a plain 429: slow down as for `slow_down`, and
  /// wait at least the server's `Retry-After` this once.
  @Test func X07_a429WhilePollingSlowsDown() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([
      .json(#"{"error":"too_many_requests"}"#, status: 429, headers: [HTTPHeader("Retry-After", "20")]),
      .json("{}", status: 429),
      Fixtures.oauthError("authorization_pending"), Fixtures.tokenReply(),
    ])
    _ = try await Fixtures.provider(transport, time).pollDeviceAuthorization(authorization(), scopes: scopes, timeout: 300)
    #expect(time.sleeps == [20, 15, 15])
  }

  @Test func missingIntervalDefaultsToFiveSeconds() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([
      Fixtures.deviceReply(interval: nil, expiresIn: nil), Fixtures.oauthError("authorization_pending"),
      Fixtures.tokenReply(),
    ])
    let provider = try Fixtures.provider(transport, time)
    let auth = try await provider.startDeviceAuthorization(scopes: scopes)
    #expect(auth.interval == 5)
    #expect(auth.expiresIn == 900)
    _ = try await provider.pollDeviceAuthorization(auth, scopes: scopes, timeout: 300)
    #expect(time.sleeps == [5])
  }

  @Test(arguments: ["authorization_declined", "access_denied"])
  func declinedStops(error: String) async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([Fixtures.oauthError("authorization_pending"), Fixtures.oauthError(error)])
    await #expect(throws: ProviderError.declined(account: "work")) {
      try await Fixtures.provider(transport, time).pollDeviceAuthorization(authorization(), scopes: scopes, timeout: 300)
    }
    #expect(transport.requests.count == 2)
  }

  @Test func expiredTokenStops() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([Fixtures.oauthError("expired_token", codes: [70019])])
    await #expect(throws: ProviderError.deviceCodeExpired(account: "work")) {
      try await Fixtures.provider(transport, time).pollDeviceAuthorization(authorization(), scopes: scopes, timeout: 300)
    }
  }

  @Test func expiresInBoundsTheWholeFlow() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport { _, _ in .json(#"{"error":"authorization_pending"}"#, status: 400) }
    await #expect(throws: ProviderError.deviceCodeExpired(account: "work")) {
      try await Fixtures.provider(transport, time)
        .pollDeviceAuthorization(authorization(expiresIn: 12), scopes: scopes, timeout: 300)
    }
    #expect(time.sleeps == [5, 5, 2])
    #expect(transport.requests.count == 3)
    #expect(time.now == Fixtures.start + 12)
  }

  @Test func loginTimeoutBoundsTheWholeFlow() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport { _, _ in .json(#"{"error":"authorization_pending"}"#, status: 400) }
    await #expect(throws: ProviderError.loginTimedOut(account: "work", seconds: 12)) {
      try await Fixtures.provider(transport, time)
        .pollDeviceAuthorization(authorization(expiresIn: 900), scopes: scopes, timeout: 12)
    }
    #expect(time.now == Fixtures.start + 12)
  }

  @Test func transientFailuresNeverShortenTheGapAndDoNotAbort() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([
      Fixtures.oauthError("authorization_pending"),
      .text("<html>Bad Gateway</html>", status: 502),
      .failure(.timedOut(host: "login.microsoftonline.com")),
      Fixtures.oauthError("authorization_pending"),
      Fixtures.tokenReply(),
    ])
    _ = try await Fixtures.provider(transport, time)
      .pollDeviceAuthorization(authorization(expiresIn: 900), scopes: scopes, timeout: 300)
    #expect(time.sleeps == [5, 10, 20, 20])
    #expect(transport.requests.count == 5)
  }

  /// X06 (git-credential-oauth#114): a proxy's 200 or 404 page between pending answers does not
  /// end the sign-in; the count starts again after an OAuth answer.
  @Test func test_X06_strayPagesBetweenPendingAnswersDoNotAbort() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([
      .text("<html>portal</html>", status: 200), .text("<html>Not Found</html>", status: 404),
      Fixtures.oauthError("authorization_pending"),
      .text("<html>Not Found</html>", status: 404), .text("<html>Not Found</html>", status: 404),
      Fixtures.tokenReply(),
    ])
    _ = try await Fixtures.provider(transport, time)
      .pollDeviceAuthorization(authorization(expiresIn: 900), scopes: scopes, timeout: 300)
    #expect(transport.requests.count == 6)
  }

  /// X06: three stray answers in a row (a wrong token-endpoint) end the sign-in: exit 6's error,
  /// naming the endpoint's URL and the status.
  @Test func test_X06_threeStrayAnswersInARowEndTheSignIn() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport { _, _ in
      HTTPResponse(status: 404, headers: [HTTPHeader("Content-Type", "text/html")], body: Array("<html>404</html>".utf8))
    }
    let error = await #expect(throws: ProviderError.self) {
      try await Fixtures.provider(transport, time)
        .pollDeviceAuthorization(authorization(expiresIn: 900), scopes: scopes, timeout: 300)
    }
    guard case .loginFailed(_, let reason) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(reason.contains("HTTP 404") && reason.contains("3 times in a row") && reason.contains("token-endpoint"))
    #expect(reason.contains("https://login.microsoftonline.com/"))
    #expect(transport.requests.count == 3)
  }

  @Test func transientFailuresUntilTheDeadlineReportUnavailable() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport { _, _ in throw HTTPError.cannotConnect(host: "login.microsoftonline.com") }
    let error = await #expect(throws: ProviderError.self) {
      try await Fixtures.provider(transport, time)
        .pollDeviceAuthorization(authorization(expiresIn: 60), scopes: scopes, timeout: 300)
    }
    guard case .unavailable(let host, _) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(host == "login.microsoftonline.com")
    #expect(time.sleeps == [10, 20, 30])
    #expect(time.now == Fixtures.start + 60)
  }

  @Test func badVerificationCodeIsRejected() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([Fixtures.oauthError("bad_verification_code", codes: [70018])])
    let error = await #expect(throws: ProviderError.self) {
      try await Fixtures.provider(transport, time).pollDeviceAuthorization(authorization(), scopes: scopes, timeout: 300)
    }
    guard case .rejected(_, let code, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(code == "bad_verification_code")
    #expect(detail.contains("AADSTS70018"))
  }

  @Test func otherErrorsStopWithAHint() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([
      Fixtures.oauthError("invalid_client", description: "AADSTS7000218: The request body must contain client_assertion", codes: [7000218], status: 401)
    ])
    let error = await #expect(throws: ProviderError.self) {
      try await Fixtures.provider(transport, time).pollDeviceAuthorization(authorization(), scopes: scopes, timeout: 300)
    }
    #expect(error?.description.contains("Allow public client flows") == true)
    #expect(error?.description.contains("AADSTS7000218") == true)
  }

  @Test func cancellationEndsPolling() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport { _, _ in .json(#"{"error":"authorization_pending"}"#, status: 400) }
    let provider = try Fixtures.provider(transport, time)
    let auth = authorization(expiresIn: 900)
    let task = Task { try await provider.pollDeviceAuthorization(auth, scopes: scopes, timeout: 300) }
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
  }
}
