import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// `TokenService.accessToken`: cache, refresh, rotation, and what happens to the refresh token.
@Suite struct TokenServiceAccessTokenTests {
  @Test func unknownAccount() async {
    let h = Harness([])
    await #expect(throws: ConfigError.unknownAccount("nope")) {
      try await h.service.accessToken(account: "nope", scopes: nil, minValid: nil, forceRefresh: false)
    }
  }

  @Test func notSignedIn() async {
    let h = Harness([])
    await #expect(throws: ProviderError.signInRequired(account: "work", reason: "not signed in")) { try await h.get() }
    #expect(h.transport.requests.isEmpty)
  }

  /// B14: a token inside the refresh margin is refreshed; one beyond it is served without network.
  @Test func cachedTokenBeyondTheMarginIsServed() async throws {
    let h = Harness([])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 300, scopes: h.scopes)
    let t = try await h.get()
    #expect(t.accessToken == Secret("AT1"))
    #expect(t.expiresOn == Fixtures.start + 300)
    #expect(t.identity == "user1@example.test")
    #expect(t.scopes == [Fixtures.graph])
    #expect(h.transport.requests.isEmpty)
  }

  @Test(arguments: [299, 20, -10])
  func cachedTokenWithinTheMarginIsRefreshed(secondsLeft: Int64) async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: nil)])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + secondsLeft, scopes: h.scopes)
    let t = try await h.get()
    #expect(t.accessToken == Secret("AT2"))
    #expect(t.expiresOn == Fixtures.start + 3599)
    #expect(h.refreshTokensSent == ["RT1"])
    #expect(try await h.store.accessRecord(h.scopes)?.accessToken == Secret("AT2"))
  }

  /// The lifetime that caps the refresh margin is `expires_in`, counted from the reply, however
  /// long the keyring then takes to store the rotated refresh token (a second passed there on a
  /// loaded machine, and a 200 s token was reported as 199 s).
  @Test func theLifetimeIsCountedFromTheReply() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: "RT2", expiresIn: "200")])
    try await h.store.putRefreshToken("RT1")
    let time = h.time
    await h.store.whenSaving { time.advance(by: 2) }
    let t = try await h.get()
    #expect(t.expiresOn == Fixtures.start + 200)
    #expect(t.lifetime == 200)
  }

  @Test func minValidRaisesTheBar() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2")])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 1000, scopes: h.scopes)
    #expect(try await h.get(minValid: 900).accessToken == Secret("AT1"))
    #expect(try await h.get(minValid: 1200).accessToken == Secret("AT2"))
  }

  @Test func aFreshTokenShorterThanMinValidIsStillReturned() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: nil, expiresIn: "600")])
    try await h.store.putRefreshToken("RT1")
    let t = try await h.get(minValid: 3600)
    #expect(t.accessToken == Secret("AT2"))
    #expect(t.expiresOn == Fixtures.start + 600)
  }

  @Test func forceRefreshSkipsTheCache() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: nil)])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3000, scopes: h.scopes)
    #expect(try await h.get(force: true).accessToken == Secret("AT2"))
  }

  @Test func scopeSetsAreCachedSeparatelyAndInAnyOrder() async throws {
    let devops = ScopeSet(["499b84ac-1321-427f-aa17-267ca6975798/.default"])
    let h = Harness([Fixtures.tokenReply(at: "AT-DEVOPS", rt: nil)])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT-GRAPH", expiresOn: Fixtures.start + 3000, scopes: h.scopes)
    let t = try await h.get(scopes: devops)
    #expect(t.accessToken == Secret("AT-DEVOPS"))
    #expect(h.transport.requests[0].formFields["scope"] == "499b84ac-1321-427f-aa17-267ca6975798/.default offline_access")
    #expect(try await h.store.accessRecord(devops)?.accessToken == Secret("AT-DEVOPS"))
    #expect(try await h.store.accessRecord(h.scopes)?.accessToken == Secret("AT-GRAPH"))
  }

  /// B08/B11: a rotated refresh token is stored before the access token is cached or returned.
  @Test func rotationStoresTheNewRefreshTokenFirst() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: "RT2")])
    try await h.store.putRefreshToken("RT1")
    _ = try await h.get()
    #expect(await h.store.writes == ["save work/refresh-token", "save work/access-token [\(Fixtures.graph)]"])
    let record = try #require(try await h.store.refreshRecord())
    #expect(record.refreshToken == Secret("RT2"))
    #expect(record.identity == "user1@example.test")
    #expect(record.tenant == "tid-1")
    #expect(record.obtainedAt == Fixtures.start)
  }

  /// A rotated token that cannot be stored is written again (3 times in all), then the call
  /// fails with exit 5 saying the account will need a new sign-in if it cannot be written; no
  /// access token is handed out or cached.
  @Test func aFailureToStoreTheRotatedTokenIsTriedAgainThenPropagatesAndNothingIsReturned() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: "RT2")])
    try await h.store.putRefreshToken("RT1")
    await h.store.failSaves(of: .refreshToken)
    let failure = StoreError.rotatedNotStored(account: "work", cause: StoreError.backend(detail: "test failure").description)
    await #expect(throws: failure) { try await h.get() }
    #expect(failure.description.contains("'work' will need 'tokenbroker login work'"))
    #expect(try await h.store.accessRecord(h.scopes) == nil)
    #expect(await h.store.writes == Array(repeating: "save work/refresh-token", count: 3))
  }

  /// A write of the rotated token that fails once is made again: the token is stored and handed out.
  @Test func aRotatedTokenWhoseWriteFailedOnceIsWrittenAgain() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: "RT2")])
    try await h.store.putRefreshToken("RT1")
    await h.store.failSaves(of: .refreshToken, times: 1)
    #expect(try await h.get().accessToken == Secret("AT2"))
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT2"))
  }

  /// The store is checked before the refresh token is spent: one that cannot be written now
  /// fails the call (exit 5) with no refresh sent, so no rotated token can be lost.
  @Test func theStoreIsCheckedBeforeTheRefreshTokenIsSpent() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: "RT2")])
    try await h.store.putRefreshToken("RT1")
    await h.store.failPreflight(with: .noCollection)
    await #expect(throws: StoreError.noCollection) { try await h.get() }
    #expect(h.refreshTokensSent == [])
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))
  }

  @Test func aFailureToCacheTheAccessTokenIsOnlyAWarning() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT2", rt: nil)])
    try await h.store.putRefreshToken("RT1")
    await h.store.failSaves(of: .accessToken)
    #expect(try await h.get().accessToken == Secret("AT2"))
    #expect(h.warnings.all.count == 1)
    #expect(h.warnings.all[0].contains("could not cache the access token of 'work'"))
  }

  /// B11: no `refresh_token`, or `""`, keeps the stored one; a rotation is then used next time.
  @Test func aReplyWithoutARefreshTokenKeepsTheStoredOne() async throws {
    let h = Harness([
      Fixtures.tokenReply(at: "AT2", rt: nil), Fixtures.tokenReply(at: "AT3", rt: ""),
      Fixtures.tokenReply(at: "AT4", rt: "RT2"), Fixtures.tokenReply(at: "AT5", rt: nil),
    ])
    try await h.store.putRefreshToken("RT1")
    _ = try await h.get(force: true)
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))
    _ = try await h.get(force: true)
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))
    #expect(h.warnings.all == ["the provider sent an empty refresh_token for 'work'; keeping the stored one"])
    _ = try await h.get(force: true)
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT2"))
    _ = try await h.get(force: true)
    #expect(h.refreshTokensSent == ["RT1", "RT1", "RT1", "RT2"])
    #expect(await h.store.writes.filter { $0.contains("refresh-token") } == ["save work/refresh-token"])
  }

  /// B12: `invalid_grant` for the very token stored deletes it and the account's access tokens.
  @Test func invalidGrantDeletesTheUnchangedRefreshToken() async throws {
    let h = Harness([Fixtures.oauthError("invalid_grant", description: "AADSTS50173: revoked", codes: [50173])])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT-OTHER", expiresOn: Fixtures.start + 3000, scopes: ScopeSet(["api://x/.default"]))
    try await h.store.putRefreshToken("RT-OTHER-ACCOUNT", account: "home")
    let error = await #expect(throws: ProviderError.self) { try await h.get(force: true) }
    #expect(
      error?.description
        == "sign-in needed for 'work': the refresh token was rejected (invalid_grant, AADSTS50173: it was revoked or its session ended); run 'tokenbroker login work'")
    #expect(try await h.store.refreshRecord() == nil)
    #expect(try await h.store.allKeys() == [.refreshToken("home")])
    // The next call does not send the dead token again, and says what happened when (interface.md §8.1).
    let at = LocalTime.hoursMinutes(Fixtures.start)
    await #expect(
      throws: ProviderError.signInRequired(
        account: "work",
        reason: "the refresh token was rejected (invalid_grant, AADSTS50173: it was revoked or its session ended) at \(at)")
    ) { try await h.get() }
    #expect(h.transport.requests.count == 1)
  }

  /// B08/B12: another process stored a newer token meanwhile: it is kept and used once.
  @Test func invalidGrantWithANewerStoredTokenRetriesWithIt() async throws {
    let store = RecordingStore()
    let transport = FakeTransport { request, _ in
      if request.formFields["refresh_token"] == "RT1" {
        // Another process redeemed RT1 and stored RT2 while this request was in flight.
        let newer = RefreshTokenRecord(refreshToken: Secret("RT2"), identity: "user1@example.test", tenant: nil, obtainedAt: 2)
        try await store.inner.save(.refreshToken("work"), label: "t", secret: newer.encoded())
        return .json(#"{"error":"invalid_grant","error_codes":[70000]}"#, status: 400)
      }
      return .json(#"{"access_token":"AT3","expires_in":3599,"refresh_token":"RT3"}"#)
    }
    let service = TokenService(
      config: Fixtures.config(), store: store, transport: transport, time: FakeTime(now: Fixtures.start), warn: { _ in })
    try await store.putRefreshToken("RT1")
    let t = try await service.accessToken(account: "work", scopes: nil, minValid: nil, forceRefresh: false)
    #expect(t.accessToken == Secret("AT3"))
    #expect(transport.requests.compactMap { $0.formFields["refresh_token"] } == ["RT1", "RT2"])
    #expect(try await store.refreshRecord()?.refreshToken == Secret("RT3"))
    #expect(await !store.writes.contains { $0.hasPrefix("delete") })
  }

  @Test func invalidGrantAfterTheRetryDoesNotDeleteTheNewerToken() async throws {
    let store = RecordingStore()
    let transport = FakeTransport { request, index in
      if index == 0 {
        let newer = RefreshTokenRecord(refreshToken: Secret("RT2"), identity: nil, tenant: nil, obtainedAt: 2)
        try await store.inner.save(.refreshToken("work"), label: "t", secret: newer.encoded())
      } else {
        let newest = RefreshTokenRecord(refreshToken: Secret("RT3"), identity: nil, tenant: nil, obtainedAt: 3)
        try await store.inner.save(.refreshToken("work"), label: "t", secret: newest.encoded())
      }
      return .json(#"{"error":"invalid_grant"}"#, status: 400)
    }
    let service = TokenService(
      config: Fixtures.config(), store: store, transport: transport, time: FakeTime(now: Fixtures.start), warn: { _ in })
    try await store.putRefreshToken("RT1")
    await #expect(throws: ProviderError.self) {
      try await service.accessToken(account: "work", scopes: nil, minValid: nil, forceRefresh: false)
    }
    #expect(transport.requests.count == 2)
    #expect(try await store.refreshRecord()?.refreshToken == Secret("RT3"))
  }

  @Test func interactionRequiredKeepsTheRefreshToken() async throws {
    let h = Harness([Fixtures.oauthError("interaction_required", description: "AADSTS50076: MFA", codes: [50076])])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT-OTHER", expiresOn: Fixtures.start + 3000, scopes: ScopeSet(["api://x/.default"]))
    let error = await #expect(throws: ProviderError.self) { try await h.get() }
    #expect(error?.description.contains("multi-factor authentication is needed for this resource (interaction_required, AADSTS50076)") == true)
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))
    #expect(await h.store.writes.isEmpty)
  }

  @Test(arguments: [
    FakeTransport.Reply.failure(.timedOut(host: "login.microsoftonline.com")),
    .text("<html>Bad Gateway</html>", status: 502),
    .text("<html>Forbidden by proxy</html>", status: 403),
    .text("not json", status: 200),
    .json(#"{"error":"invalid_grant"}"#, status: 500),
  ])
  func failuresThatAreNotARejectionNeverDeleteAnything(_ reply: FakeTransport.Reply) async throws {
    let h = Harness(FakeTransport { _, _ in
      switch reply {
      case .response(let r): return r
      case .failure(let e): throw e
      }
    })
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start - 10, scopes: h.scopes)
    let error = await #expect(throws: ProviderError.self) { try await h.get() }
    guard case .unavailable = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(await h.store.writes.isEmpty)
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))
  }

  @Test func aRetriedServerErrorThenSuccess() async throws {
    let h = Harness([
      .json(#"{"error":"temporarily_unavailable"}"#, status: 503, headers: [HTTPHeader("Retry-After", "4")]),
      Fixtures.tokenReply(at: "AT2", rt: nil),
    ])
    try await h.store.putRefreshToken("RT1")
    #expect(try await h.get().accessToken == Secret("AT2"))
    #expect(h.time.sleeps == [4])
  }

  @Test func aLockedKeyringIsReportedAsLocked() async throws {
    let store = InMemorySecretStore()
    await store.setLocked(true)
    let service = TokenService(
      config: Fixtures.config(), store: store, transport: FakeTransport([]), time: FakeTime(), warn: { _ in })
    await #expect(throws: StoreError.locked) {
      try await service.accessToken(account: "work", scopes: nil, minValid: nil, forceRefresh: false)
    }
  }

  /// B20: a cached access token is not served once the refresh token is gone.
  @Test func aCachedTokenWithoutARefreshTokenIsNotServed() async throws {
    let h = Harness([])
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3000, scopes: h.scopes)
    await #expect(throws: ProviderError.signInRequired(account: "work", reason: "not signed in")) { try await h.get() }
    #expect(try await h.store.allKeys().isEmpty)
  }

  @Test func aProviderThatReturnsAnExpiredTokenIsNeverPassedOn() async throws {
    struct Stale: OAuthProvider {
      func startDeviceAuthorization(scopes: ScopeSet) async throws -> DeviceAuthorization { throw CancellationError() }
      func pollDeviceAuthorization(_ a: DeviceAuthorization, scopes: ScopeSet, timeout: Int) async throws -> TokenGrant {
        throw CancellationError()
      }
      func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?) async throws -> TokenGrant {
        TokenGrant(accessToken: Secret("AT-OLD"), expiresOn: 5, refreshToken: Secret("RT2"), scopes: scopes.items, identity: nil)
      }
      func browserAuthorization(_ request: BrowserSignInRequest) async throws -> BrowserAuthorization { throw CancellationError() }
      func redeem(code: Secret, for a: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant { throw CancellationError() }
    }
    let store = RecordingStore()
    try await store.putRefreshToken("RT1")
    let service = TokenService(
      config: Fixtures.config(), store: store, time: FakeTime(now: Fixtures.start), warn: { _ in },
      makeProvider: { _ in Stale() })
    await #expect(throws: ProviderError.self) {
      try await service.accessToken(account: "work", scopes: nil, minValid: nil, forceRefresh: false)
    }
    // The rotated refresh token is kept all the same.
    #expect(try await store.refreshRecord()?.refreshToken == Secret("RT2"))
    #expect(try await store.accessRecord(ScopeSet([Fixtures.graph])) == nil)
  }

  /// SharePoint accounts are served from their `via` account (TokenService+SharePointTests); one
  /// without a usable `site` is a configuration error, not a token request.
  @Test func sharepointWithoutASiteIsAConfigError() async {
    var sharepoint = AccountConfig(name: "work", provider: .sharepoint)
    sharepoint.scopes = ["https://contoso.sharepoint.com/.default"]
    let h = Harness([], config: Fixtures.config([sharepoint]))
    await #expect(throws: ConfigError.self) { try await h.get() }
    #expect(h.transport.requests.isEmpty)
  }
}
