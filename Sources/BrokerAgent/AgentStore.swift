import BrokerCore

/// The store as commands inside the agent use it: a refresh token deleted here (an
/// `invalid_grant` met by a refresh the agent runs) also drops the account from the agent's
/// memory, whatever its scope set, with its dependents (`AccountDrop`). Outside the agent, the
/// CLI's `AgentNoticeStore` does the same by a message to the agent.
///
/// For a request on the forwarding socket (`only`: the accounts with `forward = yes`), the items
/// of every other account are out of reach: reading, writing or deleting one throws
/// `ForwardRefusal.accountNotForwarded` (exit 3), and listing leaves them out.
public struct AgentStore: SecretStore {
  public let base: any SecretStore
  public let cache: TokenCache
  /// The config the request runs under, for `AccountDrop`'s dependents.
  public let config: BrokerConfig?
  /// The only accounts whose items may be used, or nil: every account's.
  public let only: [String]?

  public init(base: any SecretStore, cache: TokenCache, config: BrokerConfig? = nil, only: [String]? = nil) {
    self.base = base
    self.cache = cache
    self.config = config
    self.only = only
  }

  public func load(_ key: ItemKey) async throws -> Secret? {
    try allow(key.account)
    return try await base.load(key)
  }

  public func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    try allow(key.account)
    try await base.save(key, label: label, secret: secret)
  }

  public func delete(_ key: ItemKey) async throws {
    try allow(key.account)
    guard key.kind == .refreshToken else { return try await base.delete(key) }
    do {
      try await base.delete(key)
    } catch {
      await AccountDrop.drop(key.account, from: cache, config: config)  // it may be gone all the same
      throw error
    }
    await AccountDrop.drop(key.account, from: cache, config: config)
  }

  public func keys(account: String?) async throws -> [ItemKey] {
    if let account { try allow(account) }
    let keys = try await base.keys(account: account)
    guard let only else { return keys }
    return keys.filter { only.contains($0.account) }
  }

  private func allow(_ account: String) throws {
    if let only, !only.contains(account) { throw ForwardRefusal.accountNotForwarded(account: account) }
  }
}
