import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerTestSupport
import Testing

/// B20 inside the agent: a refresh token deleted by a refresh the agent runs (invalid_grant)
/// takes the account's other cached access tokens out of memory too.
@Suite struct AgentStoreTests {
  @Test func deletingTheRefreshTokenDropsTheAccountFromMemory() async throws {
    let time = FakeTime()
    let cache = TokenCache(time: time)
    let account = AccountConfig(name: "work", provider: .azure)
    for scope in ["a", "b"] {
      _ = try await cache.token(
        for: TokenCacheKey(account: "work", scopes: ScopeSet([scope])), account: account, needed: 0, forceRefresh: false
      ) { _ in
        IssuedToken(account: "work", provider: .azure, accessToken: Secret("AT-\(scope)"), expiresOn: time.now + 3600, scopes: [scope], identity: nil)
      }
    }
    #expect(await cache.count == 2)
    let store = AgentStore(base: InMemorySecretStore(), cache: cache)
    try await store.delete(.accessToken("work", ScopeSet(["a"])))
    #expect(await cache.count == 2)  // an access-token item: memory is erase's business
    try await store.delete(.refreshToken("other"))
    #expect(await cache.count == 2)
    try await store.delete(.refreshToken("work"))
    #expect(await cache.count == 0)
  }

  /// For a forwarded request only the forwarded accounts' items exist: the others can be neither
  /// read, written, deleted nor listed, and the store behind is never asked for them.
  @Test func aForwardedRequestReachesOnlyTheForwardedAccounts() async throws {
    let base = InMemorySecretStore()
    try await base.save(.refreshToken("work"), label: "w", secret: Secret("RT-WORK"))
    try await base.save(.refreshToken("other"), label: "o", secret: Secret("RT-OTHER"))
    let store = AgentStore(base: base, cache: TokenCache(time: FakeTime()), only: ["work"])
    #expect(try await store.load(.refreshToken("work")) == Secret("RT-WORK"))
    await #expect(throws: ForwardRefusal.accountNotForwarded(account: "other")) { try await store.load(.refreshToken("other")) }
    await #expect(throws: ForwardRefusal.accountNotForwarded(account: "other")) {
      try await store.save(.refreshToken("other"), label: "o", secret: Secret("x"))
    }
    await #expect(throws: ForwardRefusal.accountNotForwarded(account: "other")) { try await store.delete(.refreshToken("other")) }
    await #expect(throws: ForwardRefusal.accountNotForwarded(account: "other")) { _ = try await store.keys(account: "other") }
    #expect(try await store.keys(account: nil).map(\.account) == ["work"])
    #expect(try await base.load(.refreshToken("other")) == Secret("RT-OTHER"))
  }
}
