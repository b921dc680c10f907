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

/// A rotated refresh token the store would not take stays in the agent's memory (`AgentStore`):
/// the provider has already replaced the stored one, which a refresh must never spend.
@Suite struct AgentStoreUnwrittenTests {
  let key = ItemKey.refreshToken("work")
  let signIn = RefreshTokenRecord(refreshToken: Secret("RT1"), identity: "u", tenant: nil, obtainedAt: 100)

  @Test func aRefreshTokenTheStoreWouldNotTakeIsServedUntilItsWriteSucceeds() async throws {
    let base = WriteFailingStore()
    try await base.inner.save(key, label: "l", secret: signIn.encoded())
    let cache = TokenCache(time: FakeTime())
    let store = AgentStore(base: base, cache: cache)
    let rotated = signIn.rotated(to: Secret("RT2"), now: 100).encoded()
    await base.setFailing(true)
    await #expect(throws: StoreError.backend(detail: "test failure")) {
      try await store.save(key, label: "l", secret: rotated)
    }
    #expect(try await store.load(key) == rotated)
    #expect(try await base.inner.load(key) == signIn.encoded())
    #expect(cache.unwritten.count == 1)
    await base.setFailing(false)
    #expect(try await store.load(key) == rotated)  // written by this load
    #expect(try await base.inner.load(key) == rotated)
    #expect(cache.unwritten.count == 0)
  }

  /// A kept token never outlives the sign-in: the store holding no refresh token (a logout,
  /// revoke or rejected grant since) or a newer one (a new sign-in) ends the keeping.
  @Test func aKeptRefreshTokenGoesWhenTheStoreHoldsNoneOrANewerOne() async throws {
    for newSignIn in [nil, RefreshTokenRecord(refreshToken: Secret("RT9"), identity: "u", tenant: nil, obtainedAt: 200)] {
      let base = WriteFailingStore()
      try await base.inner.save(key, label: "l", secret: signIn.encoded())
      let cache = TokenCache(time: FakeTime())
      let store = AgentStore(base: base, cache: cache)
      await base.setFailing(true)
      _ = try? await store.save(key, label: "l", secret: signIn.rotated(to: Secret("RT2"), now: 100).encoded())
      #expect(cache.unwritten.count == 1)
      try await base.inner.delete(key)
      if let newSignIn { try await base.inner.save(key, label: "l", secret: newSignIn.encoded()) }
      #expect(try await store.load(key) == newSignIn?.encoded())
      #expect(cache.unwritten.count == 0)
    }
  }
}

/// An in-memory store whose saves fail while `failing` is set.
private actor WriteFailingStore: SecretStore {
  let inner = InMemorySecretStore()
  private var failing = false
  func setFailing(_ value: Bool) { failing = value }

  func load(_ key: ItemKey) async throws -> Secret? { try await inner.load(key) }
  func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    if failing { throw StoreError.backend(detail: "test failure") }
    try await inner.save(key, label: label, secret: secret)
  }
  func delete(_ key: ItemKey) async throws { try await inner.delete(key) }
  func keys(account: String?) async throws -> [ItemKey] { try await inner.keys(account: account) }
}
