public import BrokerCore

/// A `SecretStore` in memory for unit tests, with switches for the states a real keyring can be in.
///
/// It follows the `SecretStore` contract (BrokerStoreTests runs the behaviour suite on it):
/// absent → nil, one item per key, delete of an absent item succeeds. `locked = true` makes
/// every call throw `StoreError.locked` without changing anything (bug-cases.md B01); `failure` makes every
/// call throw that error.
public actor InMemorySecretStore: SecretStore {
  /// The stored documents.
  public private(set) var items: [ItemKey: Secret]
  /// The label of each stored item.
  public private(set) var labels: [ItemKey: String] = [:]
  /// Simulates a locked collection.
  public var locked = false
  /// When set, every call throws it.
  public var failure: StoreError?
  /// Successful `save` calls so far.
  public private(set) var saveCount = 0
  /// Successful `delete` calls that removed an item so far.
  public private(set) var deleteCount = 0

  public init(items: [ItemKey: Secret] = [:]) { self.items = items }

  /// Sets `locked`.
  public func setLocked(_ value: Bool) { locked = value }
  /// Sets `failure` (nil clears it).
  public func setFailure(_ error: StoreError?) { failure = error }

  private func check() throws {
    if let failure { throw failure }
    if locked { throw StoreError.locked }
  }

  public func load(_ key: ItemKey) async throws -> Secret? {
    try check()
    return items[key]
  }

  public func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    try check()
    items[key] = secret
    labels[key] = label
    saveCount += 1
  }

  public func delete(_ key: ItemKey) async throws {
    try check()
    if items.removeValue(forKey: key) != nil { deleteCount += 1 }
    labels[key] = nil
  }

  public func keys(account: String?) async throws -> [ItemKey] {
    try check()
    return items.keys.filter { account == nil || $0.account == account }.sorted { $0.description < $1.description }
  }
}
