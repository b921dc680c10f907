import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerTestSupport
import Testing

/// The agent's warm answer: a token in its memory is handed out without a store or a token
/// service being built; a miss builds them once and fetches.
@Suite struct SharedTokenSourceTests {
  struct NotBuilt: Error {}

  @Test func aCachedTokenNeedsNoTokenService() async throws {
    let h = try ConfigHome(config: fileStoreConfig)
    let config = try AgentConfigCache().config(files: [h.directory + "/config/tokenbroker/config"], explicit: true)
    let account = try config.requireAccount("work")
    let time = FakeTime()
    let cache = TokenCache(time: time)
    let token = IssuedToken(
      account: "work", provider: account.provider, accessToken: Secret("at-cached"), expiresOn: time.now + 3600,
      scopes: account.scopes, identity: "someone")
    _ = try await cache.token(
      for: TokenCacheKey(account: "work", scopes: ScopeSet(account.scopes)), account: account, needed: 0,
      forceRefresh: false) { _ in token }
    let source = SharedTokenSource(cache: cache)
    let served = try await source.accessToken(
      account: "work", scopes: nil, minValid: nil, forceRefresh: false, config: config, diagnostics: .off,
      service: { throw NotBuilt() })
    #expect(served.accessToken == Secret("at-cached"))
    // Too short for --min-valid, or forced: the service is built (here: refused) for a fetch.
    await #expect(throws: NotBuilt.self) {
      _ = try await source.accessToken(
        account: "work", scopes: nil, minValid: 7200, forceRefresh: false, config: config, diagnostics: .off, service: { throw NotBuilt() })
    }
    await #expect(throws: NotBuilt.self) {
      _ = try await source.accessToken(
        account: "work", scopes: nil, minValid: nil, forceRefresh: true, config: config, diagnostics: .off, service: { throw NotBuilt() })
    }
  }
}
