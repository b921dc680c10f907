import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// `logout`, git `erase` and `status`.
@Suite struct TokenServiceAccountsTests {
  let graph = ScopeSet([Fixtures.graph])
  let other = ScopeSet(["api://x/.default"])

  @Test func logoutDeletesEveryItemOfTheAccountOnly() async throws {
    let h = Harness([], config: Fixtures.config([Fixtures.account("work"), Fixtures.account("home")]))
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3000, scopes: graph)
    try await h.store.putAccessToken("AT2", expiresOn: Fixtures.start + 3000, scopes: other)
    try await h.store.putRefreshToken("RT-HOME", account: "home")
    try await h.store.putAccessToken("AT-HOME", expiresOn: Fixtures.start + 3000, scopes: graph, account: "home")
    #expect(try await h.service.logout(account: "work") == 3)
    #expect(try await h.store.allKeys() == [.accessToken("home", graph), .refreshToken("home")])
    #expect(try await h.service.logout(account: "work") == 0)
  }

  @Test func logoutOfAnAccountNoLongerConfigured() async throws {
    let h = Harness([])
    try await h.store.putRefreshToken("RT-OLD", account: "old")
    #expect(try await h.service.logout(account: "old") == 1)
    await #expect(throws: ConfigError.unknownAccount("old")) { try await h.service.logout(account: "old") }
  }

  /// B10: only the exact token handed out is dropped, never the refresh token.
  @Test func eraseDropsOnlyTheExactAccessToken() async throws {
    let h = Harness([])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT_NEW", expiresOn: Fixtures.start + 3000, scopes: graph)
    try await h.store.putAccessToken("AT_X", expiresOn: Fixtures.start + 3000, scopes: other)
    #expect(try await h.service.eraseHandedOut(account: "work", token: Secret("AT_OLD")) == false)
    #expect(try await h.service.eraseHandedOut(account: "work", token: Secret("AT_NE")) == false)
    #expect(try await h.service.eraseHandedOut(account: "work", token: Secret("")) == false)
    #expect(try await h.store.allKeys().count == 3)
    #expect(try await h.service.eraseHandedOut(account: "work", token: Secret("AT_NEW")) == true)
    #expect(try await h.store.allKeys() == [.accessToken("work", other), .refreshToken("work")])
  }

  @Test func eraseNeverTouchesAnotherAccount() async throws {
    let h = Harness([])
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3000, scopes: graph, account: "home")
    #expect(try await h.service.eraseHandedOut(account: "work", token: Secret("AT1")) == false)
    #expect(try await h.store.allKeys().count == 1)
  }

  @Test func dropAccessTokensKeepsTheRefreshToken() async throws {
    let h = Harness([])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3000, scopes: graph)
    try await h.service.dropAccessTokens(account: "work")
    #expect(try await h.store.allKeys() == [.refreshToken("work")])
  }

  @Test func status() async throws {
    let h = Harness([])
    var s = try await h.service.status(account: "work")
    #expect(!s.signedIn)
    #expect(s.identity == nil)
    #expect(s.accessTokenExpiry == nil)
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT2", expiresOn: Fixtures.start + 100, scopes: other)
    s = try await h.service.status(account: "work")
    #expect(s.signedIn)
    #expect(s.identity == "user1@example.test")
    #expect(s.accessTokenExpiry == Fixtures.start + 100)
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 50, scopes: graph)
    #expect(try await h.service.status(account: "work").accessTokenExpiry == Fixtures.start + 50)
    await #expect(throws: ConfigError.unknownAccount("x")) { try await h.service.status(account: "x") }
  }
}
