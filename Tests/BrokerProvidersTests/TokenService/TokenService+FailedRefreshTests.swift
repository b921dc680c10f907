import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// What a failed refresh does to the stored refresh token and to the cached access token
/// (interface.md §6).
@Suite struct TokenServiceFailedRefreshTests {
  static let graph = ScopeSet([Fixtures.graph])
  static let devops = ScopeSet(["499b84ac-1321-427f-aa17-267ca6975798/.default"])

  /// Conditional Access refusing Graph to an unmanaged device (AADSTS530003 as `invalid_grant`,
  /// no `suberror`) keeps the refresh token: it still serves Azure DevOps.
  @Test(arguments: [530003, 50131])
  func Y08_aDeviceComplianceRefusalKeepsTheRefreshTokenForOtherResources(code: Int) async throws {
    let h = Harness([
      Fixtures.oauthError("invalid_grant", description: "AADSTS\(code): Your device is required to be managed", codes: [code]),
      Fixtures.tokenReply(at: "AT-DEVOPS", rt: "RT2"),
    ])
    try await h.store.putRefreshToken("RT1")
    let error = await #expect(throws: ProviderError.self) { try await h.get(scopes: Self.graph) }
    guard case .refusedByPolicy(_, _, let scopes) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(scopes == [Fixtures.graph])
    #expect(await h.store.writes.isEmpty)
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))
    #expect(try await h.get(scopes: Self.devops).accessToken == Secret("AT-DEVOPS"))
    #expect(h.refreshTokensSent == ["RT1", "RT1"])
  }
}

/// A refresh that fails inside `refresh-margin` for any reason but a dead grant hands out the
/// cached token while it is still valid, after one short attempt (interface.md §6).
@Suite struct TokenServiceFallbackTests {
  static let unavailable = FakeTransport.Reply.json(#"{"error":"temporarily_unavailable"}"#, status: 503)

  /// A harness whose cached token has `left` seconds (inside the 300 s margin) and whose
  /// `--verbose` lines are kept.
  func harness(_ transport: FakeTransport, left: Int64 = 290) async throws -> (Harness, Warnings) {
    let lines = Warnings()
    let h = Harness(transport, diagnostics: Diagnostics { lines.add($0) })
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + left, scopes: h.scopes)
    return (h, lines)
  }

  @Test func Y04_a503InsideTheMarginHandsOutTheCachedTokenAfterOneAttempt() async throws {
    let (h, lines) = try await harness(FakeTransport([Self.unavailable, Self.unavailable, Self.unavailable]))
    let t = try await h.get()
    #expect(t.accessToken == Secret("AT1") && t.expiresOn == Fixtures.start + 290)
    #expect(h.transport.requests.count == 1)  // one short try: no retries while a valid token exists
    #expect(h.transport.requests[0].connectTimeout <= 5 && h.transport.requests[0].totalTimeout <= 10)
    #expect(h.time.sleeps.isEmpty)
    #expect(await h.store.writes.isEmpty)
    #expect(lines.all.contains { $0.contains("handing out the cached token, still valid for 290 s") && $0.contains("HTTP 503") })
  }

  @Test func Y04_aNetworkFailureOrAThrottleHandsOutTheCachedToken() async throws {
    let loop = Fixtures.oauthError("invalid_grant", description: "AADSTS50196: loop", codes: [50196])
    for reply in [FakeTransport.Reply.failure(.cannotConnect(host: "login.microsoftonline.com")), loop] {
      let (h, _) = try await harness(FakeTransport([reply]))
      #expect(try await h.get().accessToken == Secret("AT1"))
      // During a hold nothing is sent, and the cached token still serves.
      h.time.advance(by: 10)
      #expect(try await h.get().accessToken == Secret("AT1"))
      #expect(h.transport.requests.count <= 2)
    }
  }

  @Test func Y04_aTokenThatCannotMeetMinValidOrAForcedRefreshIsNotHandedOut() async throws {
    let (h, _) = try await harness(FakeTransport([Self.unavailable, Self.unavailable, Self.unavailable]))
    await #expect(throws: ProviderError.self) { try await h.get(minValid: 291) }
    #expect(h.transport.requests.count == 3)  // no fallback: the usual retries
    let (forced, _) = try await harness(FakeTransport([Self.unavailable, Self.unavailable, Self.unavailable]))
    await #expect(throws: ProviderError.self) { try await forced.get(force: true) }
    let (expired, _) = try await harness(FakeTransport([Self.unavailable, Self.unavailable, Self.unavailable]), left: 0)
    await #expect(throws: ProviderError.self) { try await expired.get() }
  }

  @Test func Y04_aDeadGrantIsReportedAndSignsOutWhateverIsCached() async throws {
    let (h, _) = try await harness(
      FakeTransport([Fixtures.oauthError("invalid_grant", description: "AADSTS50173: revoked", codes: [50173])]))
    guard case .signInRequired = await #expect(throws: ProviderError.self, performing: { try await h.get() }) else {
      Issue.record("not a sign-in")
      return
    }
    #expect(try await h.store.refreshRecord() == nil)
    #expect(try await h.store.accessRecord(h.scopes) == nil)
  }
}


/// A wall clock stepped back after a token was fetched (bug-cases-4 Y01).
@Suite struct TokenServiceClockStepTests {
  /// A stored token whose `obtained_at` is later than now was fetched while the clock ran ahead:
  /// its expiry is too late by the step, so it is refreshed, not served (and not a fallback).
  @Test func Y01_aTokenObtainedAfterNowIsNotServedFromTheStore() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: nil)])
    try await h.store.putRefreshToken("RT1")
    let record = AccessTokenRecord(
      accessToken: Secret("AT1"), expiresOn: Fixtures.start + 3660, scopes: h.scopes.items, obtainedAt: Fixtures.start + 3600)
    try await h.store.save(.accessToken("work", h.scopes), label: "t", secret: record.encoded())
    #expect(try await h.get().accessToken == Secret("AT2"))
    #expect(h.refreshTokensSent == ["RT1"])
  }
}
