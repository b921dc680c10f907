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
}
