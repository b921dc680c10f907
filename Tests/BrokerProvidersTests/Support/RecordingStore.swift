import BrokerCore
import BrokerTestSupport

/// An `InMemorySecretStore` that logs every call (to check the order of saves) and can fail saves
/// of one kind of item.
actor RecordingStore: SecretStore {
  let inner = InMemorySecretStore()
  /// `load|save|delete <key>` and `keys <account or *>` per call, in order.
  private(set) var log: [String] = []
  /// Saves of these kinds throw `StoreError.backend`, each as many more times as given.
  private(set) var failingSaves: [ItemKind: Int] = [:]
  /// What `preflightWrite` throws, or nil.
  private var preflightError: StoreError?

  /// Runs before every save (e.g. a clock that moves while the keyring writes).
  private var beforeSave: (@Sendable () -> Void)?
  /// Runs before every delete.
  private var beforeDelete: (@Sendable () -> Void)?

  func failSaves(of kind: ItemKind, times: Int = .max) { failingSaves[kind] = times }
  func failPreflight(with error: StoreError) { preflightError = error }
  func whenSaving(_ body: @escaping @Sendable () -> Void) { beforeSave = body }
  func whenDeleting(_ body: @escaping @Sendable () -> Void) { beforeDelete = body }

  func load(_ key: ItemKey) async throws -> Secret? {
    log.append("load \(key)")
    return try await inner.load(key)
  }

  func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    log.append("save \(key)")
    beforeSave?()
    if let times = failingSaves[key.kind] {
      failingSaves[key.kind] = times > 1 ? times - 1 : nil
      throw StoreError.backend(detail: "test failure")
    }
    try await inner.save(key, label: label, secret: secret)
  }

  func delete(_ key: ItemKey) async throws {
    log.append("delete \(key)")
    beforeDelete?()
    try await inner.delete(key)
  }

  func preflightWrite(for key: ItemKey?) async throws {
    log.append("preflight")
    if let preflightError { throw preflightError }
  }

  func keys(account: String?) async throws -> [ItemKey] {
    log.append("keys \(account ?? "*")")
    return try await inner.keys(account: account)
  }

  /// The writes only (saves and deletes).
  var writes: [String] { log.filter { !$0.hasPrefix("load ") && !$0.hasPrefix("keys ") && $0 != "preflight" } }

  // MARK: direct access for arranging and checking

  func putRefreshToken(
    _ token: String, account: String = "work", identity: String? = "user1@example.test", clientID: String? = nil
  ) async throws {
    let record = RefreshTokenRecord(
      refreshToken: Secret(token), identity: identity, tenant: "tid-1", obtainedAt: 1, clientID: clientID)
    try await inner.save(.refreshToken(account), label: "test", secret: record.encoded())
  }

  func putAccessToken(_ token: String, expiresOn: Int64, scopes: ScopeSet, account: String = "work") async throws {
    let record = AccessTokenRecord(accessToken: Secret(token), expiresOn: expiresOn, scopes: scopes.items)
    try await inner.save(.accessToken(account, scopes), label: "test", secret: record.encoded())
  }

  func refreshRecord(_ account: String = "work") async throws -> RefreshTokenRecord? {
    guard let s = try await inner.load(.refreshToken(account)) else { return nil }
    return try RefreshTokenRecord.decode(s, item: "rt")
  }

  func accessRecord(_ scopes: ScopeSet, account: String = "work") async throws -> AccessTokenRecord? {
    guard let s = try await inner.load(.accessToken(account, scopes)) else { return nil }
    return try AccessTokenRecord.decode(s, item: "at")
  }

  func allKeys() async throws -> [ItemKey] { try await inner.keys(account: nil) }
}
