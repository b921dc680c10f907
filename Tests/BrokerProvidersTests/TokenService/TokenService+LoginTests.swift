import BrokerCore
import BrokerTestSupport
import Synchronization
import Testing

@testable import BrokerProviders

@Suite struct TokenServiceLoginTests {
  @Test func deviceCodeLoginStoresTheRefreshTokenAndReplacesCachedTokens() async throws {
    let h = Harness([
      Fixtures.deviceReply(), Fixtures.oauthError("authorization_pending"),
      Fixtures.tokenReply(at: "AT-U2", rt: "RT-U2", idToken: Fixtures.idToken),
    ])
    // user0's tokens from before (B20).
    try await h.store.putRefreshToken("RT-U0", identity: "user0@example.test")
    try await h.store.putAccessToken("AT-U0", expiresOn: Fixtures.start + 3000, scopes: h.scopes)
    try await h.store.putAccessToken("AT-U0-X", expiresOn: Fixtures.start + 3000, scopes: ScopeSet(["api://x/.default"]))
    let shown = Mutex<[String]>([])
    let token = try await h.service.loginWithDeviceCode(account: "work") { auth in
      shown.withLock { $0.append(auth.userCode) }
    }
    #expect(shown.withLock { $0 } == ["ABCD-EFGH"])
    #expect(token.identity == "user1@example.test")
    #expect(token.accessToken == Secret("AT-U2"))
    #expect(token.scopes == [Fixtures.graph])
    let record = try #require(try await h.store.refreshRecord())
    #expect(record.refreshToken == Secret("RT-U2"))
    #expect(record.identity == "user1@example.test")
    #expect(record.tenant == "tid-1")
    #expect(record.objectID == "oid-1")
    #expect(try await h.store.accessRecord(h.scopes)?.accessToken == Secret("AT-U2"))
    #expect(try await h.store.accessRecord(ScopeSet(["api://x/.default"])) == nil)
    let writes = await h.store.writes
    #expect(writes.first == "save work/refresh-token")
    #expect(writes.last == "save work/access-token [\(Fixtures.graph)]")
    #expect(h.time.sleeps == [5])
    #expect(h.transport.requests[0].formFields["scope"] == "https://graph.microsoft.com/.default openid profile offline_access")
  }

  /// A sign-in within the second of a rotation of the record it replaces is the newer document:
  /// counted from 0 rotations it lost to the rotated one, so the Secret Service kept the old grant
  /// beside the new and handed out the old (test_step_up, one run in three).
  @Test func aSignInComesAfterARecordRotatedInTheSameSecond() async throws {
    let h = Harness([Fixtures.deviceReply(), Fixtures.tokenReply(at: "AT-2", rt: "RT-2", idToken: Fixtures.idToken)])
    let rotated = RefreshTokenRecord(refreshToken: Secret("RT-1"), identity: "user1@example.test", tenant: "tid-1", obtainedAt: h.time.now)
      .rotated(to: Secret("RT-1b"), now: h.time.now)
    try await h.store.save(.refreshToken("work"), label: "l", secret: rotated.encoded())
    _ = try await h.service.loginWithDeviceCode(account: "work") { _ in }
    let record = try #require(try await h.store.refreshRecord())
    #expect(record.refreshToken == Secret("RT-2"))
    let (old, new) = (DocumentAge(document: Array(rotated.encoded().revealed.utf8)), DocumentAge(document: Array(record.encoded().revealed.utf8)))
    #expect(try #require(new).isNewer(than: #require(old)))
  }

  @Test func loginTimeoutComesFromTheSettings() async throws {
    var config = Fixtures.config()
    config.settings.loginTimeout = 30
    let transport = FakeTransport { request, index in
      index == 0
        ? .json(#"{"device_code":"DC","user_code":"U","verification_uri":"https://microsoft.com/devicelogin","interval":5,"expires_in":900}"#)
        : .json(#"{"error":"authorization_pending"}"#, status: 400)
    }
    let h = Harness(transport, config: config)
    await #expect(throws: ProviderError.loginTimedOut(account: "work", seconds: 30)) {
      try await h.service.loginWithDeviceCode(account: "work") { _ in }
    }
    #expect(await h.store.writes.isEmpty)
  }

  @Test func aSignInWithoutARefreshTokenFails() async throws {
    let h = Harness([Fixtures.deviceReply(), Fixtures.tokenReply(rt: nil)])
    let error = await #expect(throws: ProviderError.self) { try await h.service.loginWithDeviceCode(account: "work") { _ in } }
    guard case .rejected(_, "no_refresh_token", _) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(await h.store.writes.isEmpty)
  }

  @Test func declinedLoginKeepsEverything() async throws {
    let h = Harness([Fixtures.deviceReply(), Fixtures.oauthError("authorization_declined")])
    try await h.store.putRefreshToken("RT1")
    await #expect(throws: ProviderError.declined(account: "work")) {
      try await h.service.loginWithDeviceCode(account: "work") { _ in }
    }
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))
  }

  /// B29: the device code never shows in an error, whatever the provider echoes.
  @Test func theDeviceCodeNeverShowsInErrors() async throws {
    let dc = "DC-SENTINEL-77aa"
    for reply in [
      Fixtures.oauthError("invalid_request", description: "device_code \(dc) is malformed"),
      Fixtures.oauthError("bad_verification_code", description: "code \(dc)"),
      .text("<p>\(dc)</p>", status: 404),
    ] {
      let h = Harness([Fixtures.deviceReply(deviceCode: dc), reply])
      let error = await #expect(throws: (any Error).self) { try await h.service.loginWithDeviceCode(account: "work") { _ in } }
      #expect(!"\(error.map { "\($0)" } ?? "")".contains("SENTINEL"))
    }
  }
}
