import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// Refresh-token lifetimes the provider states (Google "Testing" consent screens: 7 days):
/// recorded, warned about at sign-in and in the last day, and named when the grant dies then.
@Suite struct TokenServiceSignInLifetimeTests {
  static let week: Int64 = 604_799

  func googleHarness(_ replies: [FakeTransport.Reply]) -> Harness {
    Harness(FakeTransport(replies), config: Fixtures.config([GoogleFixtures.account()]))
  }

  @Test func Y09_aGoogleSignInOfSevenDaysIsRecordedAndWarnedAbout() async throws {
    let h = googleHarness([])
    let reply = #"{"access_token":"ya29.AT","expires_in":3599,"refresh_token":"RT1","refresh_token_expires_in":604799}"#
    let grant = try TokenReply.grant(from: Array(reply.utf8), requested: ScopeSet(["openid"]), now: h.time.now, host: "g")
    _ = try await h.service.storeSignIn(grant, account: GoogleFixtures.account(), scopes: ScopeSet(["openid"]), clientID: nil)
    #expect(try await h.store.refreshRecord("g")?.expiresOn == Fixtures.start + Self.week)
    let warning = h.warnings.all.first { $0.contains("sign-in of 'g' ends in 6 days 23 h") }
    #expect(warning?.contains("'Testing' publishing status") == true && warning?.contains("'In production'") == true)
    #expect(try await h.service.details(account: "g").refreshTokenExpiresOn == Fixtures.start + Self.week)
  }

  @Test func Y09_noWarningForALongOrUnstatedLifetime() async throws {
    let h = Harness([])
    for extra in [#","refresh_expires_in":0"#, #","refresh_token_expires_in":7776000"#, ""] {
      let reply = #"{"access_token":"AT","refresh_token":"RT1"\#(extra)}"#
      let grant = try TokenReply.grant(from: Array(reply.utf8), requested: h.scopes, now: h.time.now, host: "h")
      _ = try await h.service.storeSignIn(grant, account: Fixtures.account(), scopes: h.scopes, clientID: nil)
    }
    #expect(h.warnings.all.filter { $0.contains("ends in") }.isEmpty)
  }

  @Test func Y09_tokenGetWarnsInTheLastDay() async throws {
    let h = googleHarness([])
    let record = RefreshTokenRecord(
      refreshToken: Secret("RT1"), identity: "u", tenant: nil, obtainedAt: Fixtures.start - Self.week + 3600,
      expiresOn: Fixtures.start + 3600)
    try await h.store.save(.refreshToken("g"), label: "t", secret: record.encoded())
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3000, scopes: ScopeSet(["openid", "email", GoogleFixtures.cloud]), account: "g")
    _ = try await h.service.accessToken(account: "g", scopes: nil, minValid: nil, forceRefresh: false)
    #expect(h.warnings.all.contains { $0.hasPrefix("the sign-in of 'g' ends in 1 h") })
  }

  @Test func Y09_aGrantDeadAtItsStatedTimeSaysTheTimeLimitWasReached() async throws {
    let h = googleHarness([GoogleFixtures.error("invalid_grant", "Token has been expired or revoked.")])
    let record = RefreshTokenRecord(
      refreshToken: Secret("RT1"), identity: "u", tenant: nil, obtainedAt: Fixtures.start - Self.week - 10,
      expiresOn: Fixtures.start - 10)
    try await h.store.save(.refreshToken("g"), label: "t", secret: record.encoded())
    let error = await #expect(throws: ProviderError.self) {
      try await h.service.accessToken(account: "g", scopes: nil, minValid: nil, forceRefresh: false)
    }
    guard case .signInRequired(_, let reason) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(reason.hasPrefix("the refresh token reached the time limit oauth2.googleapis.com set for it (6 days 23 h after the sign-in)"))
    #expect(reason.contains("'In production'"))
    #expect(try await h.store.refreshRecord("g") == nil)
  }
}
