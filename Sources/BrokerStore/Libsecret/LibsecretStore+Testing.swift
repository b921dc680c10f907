internal import BrokerCore

/// Hooks for BrokerStoreTests (`@testable import`): states the public API never creates.
extension LibsecretStore {
  /// The number of items matching `key`, locked ones included.
  func itemCount(_ key: ItemKey) async throws -> Int {
    try await perform { session throws(StoreError) in try session.search(key.attributes).count }
  }

  /// What `load`'s first step reads (`LibsecretSession.soleSecret`): the secret of the one
  /// unlocked item of tokenbroker's schema matching `key`, or nil when `load` must search further.
  func soleSecret(_ key: ItemKey) async throws -> String? {
    try await perform { session throws(StoreError) in
      try session.soleSecret(key.attributes).map { String(decoding: $0, as: UTF8.self) }
    }
  }

  /// The D-Bus path of the session an operation started now uses: another path, another
  /// connection.
  func sessionPath() async throws -> String? {
    try await perform { session throws(StoreError) in session.sessionPath }
  }

  /// Adds an item without replacing an existing one, making a duplicate (bug-cases.md B06: a crash or a
  /// concurrent writer of another program).
  func insertDuplicate(_ key: ItemKey, label: String, secret: Secret) async throws {
    try await perform { session throws(StoreError) in
      guard let collection = try session.defaultCollection() else { throw StoreError.noCollection }
      _ = try session.create(in: collection, attributes: key.attributes, label: label, text: secret.revealed)
    }
  }
}
