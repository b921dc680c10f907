@testable import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerStore
import BrokerTestSupport
import BrokerWire
import Testing

/// The one rule for forgetting an account (`AccountDrop`), through each of its triggers: the
/// account goes with every account derived from its sign-in (SharePoint `via`), others stay.
@Suite struct AccountDropTests {
  /// `work` (azure), `site` (sharepoint via work) and `other` (azure).
  static let config = fileStoreConfig + """

    [account site]
    provider = sharepoint
    site = https://contoso.sharepoint.com
    via = work

    [account other]
    provider = azure
    client-id = cid2
    """
  let time = FakeTime()

  func parse(_ text: String) throws -> BrokerConfig {
    try ConfigParser.parse(try KeyFileLoader.load(paths: ["/f"], contents: [Array(text.utf8)], errors: [0], explicit: true))
  }

  /// A cache holding one token of each of the three accounts.
  func filled() async throws -> TokenCache {
    let cache = TokenCache(time: time)
    for name in ["work", "site", "other"] {
      _ = try await cache.token(
        for: TokenCacheKey(account: name, scopes: ScopeSet(["s"])), account: AccountConfig(name: name, provider: .azure),
        needed: 0, forceRefresh: false
      ) { _ in
        IssuedToken(account: name, provider: .azure, accessToken: Secret("AT-\(name)"), expiresOn: time.now + 3600, scopes: ["s"], identity: nil)
      }
    }
    return cache
  }

  func held(_ cache: TokenCache, _ name: String) async -> Bool {
    await cache.cachedWithRevision(
      TokenCacheKey(account: name, scopes: ScopeSet(["s"])), account: AccountConfig(name: name, provider: .azure), needed: { _ in 0 }
    ) != nil
  }

  func expectOnlyOtherLeft(_ cache: TokenCache) async {
    #expect(await !held(cache, "work"))
    #expect(await !held(cache, "site"))
    #expect(await held(cache, "other"))
  }

  @Test func theAccountGoesWithItsDependentsOrAloneWithoutAConfig() async throws {
    let cache = try await filled()
    await AccountDrop.drop("work", from: cache, config: try parse(Self.config))
    await expectOnlyOtherLeft(cache)
    let alone = try await filled()
    await AccountDrop.drop("work", from: alone, config: nil)
    #expect(await alone.count == 2)
    await AccountDrop.drop(nil, from: alone, config: nil)  // a lock, or another store
    #expect(await alone.count == 0)
    #expect(AccountDrop.dependents(of: "site", in: try parse(Self.config)).isEmpty)
  }

  /// logout, login, revoke or a store change in another process: `op=drop`.
  @Test func aDropRequestTakesTheDependents() async throws {
    let home = try ConfigHome(config: Self.config)
    let environment = home.environment
    let cache = try await filled()
    let handler = requestHandler(cache: cache, environment: environment)
    _ = await handler.handle(AgentRequest(operation: .drop, account: "work"))
    await expectOnlyOtherLeft(cache)
  }

  /// A store change the agent makes for another process (`op=store`, `store = encrypted-file`):
  /// a saved refresh token is a new sign-in.
  @Test func aRefreshTokenSavedThroughTheAgentsStoreTakesTheDependents() async throws {
    let s = StoreRequestHandlerTests()
    let home = try ConfigHome(config: Self.config)
    let environment = [
      "HOME": s.directory, "XDG_DATA_HOME": s.directory + "/data", "XDG_RUNTIME_DIR": s.directory,
      "XDG_CONFIG_HOME": home.directory + "/config",
    ]
    let cache = try await filled()
    let handler = requestHandler(cache: cache, environment: environment)
    #expect(await handler.handle(try s.unlock(handler, "pw", create: true)).exit == 0)
    #expect(await cache.count == 3)
    let save = s.store(.save, [
      CredentialField("item", "refresh-token:work"), CredentialField("label", "l"),
      CredentialField("secret", "{\"v\":1,\"refresh_token\":\"RT\"}"),
    ])
    #expect(await handler.handle(save).exit == 0)
    await expectOnlyOtherLeft(cache)
  }

  /// invalid_grant (or a logout) inside the agent deletes the refresh token through `AgentStore`.
  @Test func aRefreshTokenDeletedInsideTheAgentTakesTheDependents() async throws {
    let cache = try await filled()
    let store = AgentStore(base: InMemorySecretStore(), cache: cache, config: try parse(Self.config))
    try await store.delete(.refreshToken("work"))
    await expectOnlyOtherLeft(cache)
  }

  /// A claims challenge drops the account before it refreshes with the claims.
  @Test func aClaimsChallengeDropsThroughTheAgentSide() async throws {
    let cache = try await filled()
    let side = AgentSide(cache: cache, keys: StoreKeyHolder(), config: try parse(Self.config), recorder: AnswerRecorder())
    await side.drop(account: "work")
    await expectOnlyOtherLeft(cache)
  }

  /// An edited account group (by hand, or `account add`/`remove`) is stale; its dependents go
  /// when it is dropped, not by being listed.
  @Test func aConfigEditMakesTheEditedAccountStale() throws {
    let before = try parse(Self.config)
    let edited = try parse(Self.config.replacingOccurrences(of: "client-id = cid\n", with: "client-id = changed\n"))
    #expect(AgentConfigCache.stale(before: before, after: edited) == .accounts(["work"]))
    let removed = try parse(Self.config.replacingOccurrences(of: "[account other]\nprovider = azure\nclient-id = cid2", with: ""))
    #expect(AgentConfigCache.stale(before: before, after: removed) == .accounts(["other"]))
  }

  /// The encrypted store locked: everything goes (`StoreKeyHolder`'s `onDrop` in `agent run`).
  @Test func aLockDropsEveryAccount() async throws {
    let cache = try await filled()
    let holder = StoreKeyHolder(onDrop: { await AccountDrop.drop(nil, from: cache, config: nil) })
    holder.hold(StoreKeyHolderTests.key(), path: "/a/tokens.enc", seconds: 0)
    await holder.drop()
    #expect(await cache.count == 0)
  }
}
