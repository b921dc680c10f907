@testable import BrokerCLI
import BrokerCore
import BrokerTestSupport
import Testing

/// A store in which another process writes an item of the account after each of the first
/// `rewrites` deletes (a `token get` under way while `logout` runs), or whose deletes never take.
private actor RacingStore: SecretStore {
  let inner = InMemorySecretStore(items: [.refreshToken("work"): Secret("{}")])
  var rewrites: Int
  let deletes: Bool
  init(rewrites: Int, deletes: Bool = true) {
    self.rewrites = rewrites
    self.deletes = deletes
  }

  func load(_ key: ItemKey) async throws -> Secret? { try await inner.load(key) }
  func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    try await inner.save(key, label: label, secret: secret)
  }
  func delete(_ key: ItemKey) async throws {
    guard deletes else { return }
    try await inner.delete(key)
    if rewrites > 0 {
      rewrites -= 1
      try await inner.save(.accessToken("work", ScopeSet(["a"])), label: "racing", secret: Secret("{}"))
    }
  }
  func keys(account: String?) async throws -> [ItemKey] { try await inner.keys(account: account) }
}

@Suite struct LogoutCommandTests {
  @Test func itemsWrittenByARacingCallAreDeletedToo() async throws {
    let store = RacingStore(rewrites: 2)
    #expect(try await LogoutCommand.signOut("work", store: store) == 3)
    #expect(try await store.keys(account: "work").isEmpty)
  }

  @Test func aStoreThatDoesNotDeleteIsAFailure() async throws {
    await #expect(throws: StoreError.self) { try await LogoutCommand.signOut("work", store: RacingStore(rewrites: 0, deletes: false)) }
  }

  @Test func nothingStoredIsNothingRemoved() async throws {
    #expect(try await LogoutCommand.signOut("other", store: RacingStore(rewrites: 0)) == 0)
  }
}
