import BrokerCore
import BrokerStore

/// The Secret Service store as the agent uses it: libsecret's cached connection is dropped before
/// each operation (`LibsecretStore.forgetConnection`), so a replaced keyring daemon or a collection
/// locked meanwhile is seen exactly as a new tokenbroker-core process would see it.
struct FreshConnectionStore: SecretStore {
  let base: LibsecretStore

  func load(_ key: ItemKey) async throws -> Secret? {
    LibsecretStore.forgetConnection()
    return try await base.load(key)
  }

  func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    LibsecretStore.forgetConnection()
    try await base.save(key, label: label, secret: secret)
  }

  func delete(_ key: ItemKey) async throws {
    LibsecretStore.forgetConnection()
    try await base.delete(key)
  }

  func keys(account: String?) async throws -> [ItemKey] {
    LibsecretStore.forgetConnection()
    return try await base.keys(account: account)
  }
}
