import BrokerCore
import Testing

@testable import BrokerStore

/// The `SecretStore` contract (BrokerCore/SecretStore.swift), written once and run on every store:
/// in memory and the file store always, the Secret Service when `TOKENBROKER_KEYRING_TESTS=1`.
@Suite("SecretStore behaviour")
struct SecretStoreBehaviourTests {
  @Test(arguments: StoreUnderTest.enabled)
  func absentItemIsNil(_ kind: StoreUnderTest) async throws {
    let store = kind.make()
    let account = uniqueAccount()
    #expect(try await store.load(.refreshToken(account)) == nil)
    #expect(try await store.load(.accessToken(account, ScopeSet(["a"]))) == nil)
    #expect(try await store.keys(account: account).isEmpty)
  }

  @Test(arguments: StoreUnderTest.enabled)
  func roundTripUnicodeAndLargeValue(_ kind: StoreUnderTest) async throws {
    let store = kind.make()
    let key = ItemKey.refreshToken(uniqueAccount())
    let unicode = Secret("{\"v\":1,\"x\":\"ünïcødé ✓ 😀 \\n \\\"q\\\"\"}")
    try await store.save(key, label: key.label(provider: "azure"), secret: unicode)
    #expect(try await store.load(key) == unicode)

    let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~é")
    let large = Secret(String((0..<60_000).map { _ in alphabet.randomElement() ?? "a" }))
    try await store.save(key, label: key.label(provider: "azure"), secret: large)
    #expect(try await store.load(key) == large)
    try await store.delete(key)
  }

  @Test(arguments: StoreUnderTest.enabled)
  func replaceKeepsOneItem(_ kind: StoreUnderTest) async throws {
    let store = kind.make()
    let key = ItemKey.refreshToken(uniqueAccount())
    for value in ["one", "two", "three"] {
      try await store.save(key, label: key.label(provider: "google"), secret: Secret(value))
    }
    #expect(try await store.load(key) == Secret("three"))
    #expect(try await StoreUnderTest.count(store, key) == 1)
    try await store.delete(key)
    #expect(try await store.load(key) == nil)
  }

  @Test(arguments: StoreUnderTest.enabled)
  func deleteOfAbsentItemSucceeds(_ kind: StoreUnderTest) async throws {
    let store = kind.make()
    try await store.delete(.refreshToken(uniqueAccount()))
    try await store.delete(.accessToken(uniqueAccount(), ScopeSet(["x"])))
  }

  @Test(arguments: StoreUnderTest.enabled)
  func keysFilterByAccount(_ kind: StoreUnderTest) async throws {
    let store = kind.make()
    let (a, b) = (uniqueAccount("a:%x"), uniqueAccount("b"))
    let keysA: [ItemKey] = [.refreshToken(a), .accessToken(a, ScopeSet(["s1", "s2"])), ItemKey(account: a, kind: .cookies)]
    for key in keysA + [.refreshToken(b)] {
      try await store.save(key, label: key.label(provider: "azure"), secret: Secret("doc"))
    }
    #expect(Set(try await store.keys(account: a)) == Set(keysA))
    #expect(try await store.keys(account: b) == [.refreshToken(b)])
    let all = Set(try await store.keys(account: nil))
    #expect(all.isSuperset(of: keysA + [.refreshToken(b)]))
    try await store.deleteAll(account: a)
    #expect(try await store.keys(account: a).isEmpty)
    #expect(try await store.keys(account: b) == [.refreshToken(b)])
    try await store.deleteAll(account: b)
  }

  @Test(arguments: StoreUnderTest.enabled)
  func accessTokensWithOtherScopesAreDistinct(_ kind: StoreUnderTest) async throws {
    let store = kind.make()
    let account = uniqueAccount()
    let graph = ItemKey.accessToken(account, ScopeSet(["https://graph.microsoft.com/.default"]))
    let two = ItemKey.accessToken(account, ScopeSet(["b", "a"]))
    let empty = ItemKey.accessToken(account, ScopeSet([String]()))
    try await store.save(graph, label: graph.label(provider: "azure"), secret: Secret("G"))
    try await store.save(two, label: two.label(provider: "azure"), secret: Secret("AB"))
    try await store.save(empty, label: empty.label(provider: "azure"), secret: Secret("E"))
    #expect(try await store.load(graph) == Secret("G"))
    #expect(try await store.load(.accessToken(account, ScopeSet(["a", "b"]))) == Secret("AB"))
    #expect(try await store.load(empty) == Secret("E"))
    #expect(try await store.load(.accessToken(account, ScopeSet(["a"]))) == nil)
    #expect(try await store.load(.refreshToken(account)) == nil)
    try await store.delete(two)
    #expect(try await store.load(graph) == Secret("G"))
    try await store.deleteAll(account: account)
  }

  /// B06: concurrent saves of one key leave exactly one item holding one of the values.
  @Test(arguments: StoreUnderTest.enabled)
  func concurrentSavesLeaveOneItem(_ kind: StoreUnderTest) async throws {
    let store = kind.make()
    let key = ItemKey.refreshToken(uniqueAccount())
    let values = (0..<16).map { Secret("RT_\($0)") }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for value in values {
        group.addTask { try await store.save(key, label: key.label(provider: "azure"), secret: value) }
      }
      try await group.waitForAll()
    }
    #expect(try await StoreUnderTest.count(store, key) == 1)
    let stored = try #require(try await store.load(key))
    #expect(values.contains(stored))
    try await store.delete(key)
  }

  @Test(arguments: StoreUnderTest.enabled)
  func recordDocumentsRoundTrip(_ kind: StoreUnderTest) async throws {
    let store = kind.make()
    let account = uniqueAccount()
    let refresh = RefreshTokenRecord(
      refreshToken: Secret("0.AXoA-rt/ü"), identity: "user@contoso.example", tenant: "tid-1", objectID: "oid-1",
      obtainedAt: 1_700_000_000)
    let rkey = ItemKey.refreshToken(account)
    try await store.save(rkey, label: rkey.label(provider: "azure"), secret: refresh.encoded())
    let loadedRefresh = try #require(try await store.load(rkey))
    #expect(try RefreshTokenRecord.decode(loadedRefresh, item: rkey.description) == refresh)

    let scopes = ScopeSet(["openid", "email"])
    let access = AccessTokenRecord(accessToken: Secret("ya29.token"), expiresOn: 1_700_003_600, scopes: scopes.items)
    let akey = ItemKey.accessToken(account, scopes)
    try await store.save(akey, label: akey.label(provider: "google"), secret: access.encoded())
    let loadedAccess = try #require(try await store.load(akey))
    #expect(try AccessTokenRecord.decode(loadedAccess, item: akey.description) == access)
    try await store.deleteAll(account: account)
  }

  /// `login`'s check before a sign-in: a store that can take a save passes, writing nothing.
  @Test(arguments: StoreUnderTest.enabled)
  func preflightWritePassesAndWritesNothing(_ kind: StoreUnderTest) async throws {
    let store = kind.make()
    let account = uniqueAccount()
    try await store.preflightWrite()
    #expect(try await store.keys(account: account).isEmpty)
  }
}
