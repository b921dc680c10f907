import BrokerCore

/// The store as commands inside the agent use it: a refresh token deleted here (an
/// `invalid_grant` met by a refresh the agent runs) also drops the account from the agent's
/// memory, whatever its scope set, with its dependents (`AccountDrop`). Outside the agent, the
/// CLI's `AgentNoticeStore` does the same by a message to the agent.
///
/// A refresh-token document the agent could not write (a rotated token, which the provider has
/// already swapped for the old one) is kept in memory (`TokenCache.unwritten`), and while it is
/// kept `load` answers with it rather than with the older stored token, so a refresh never spends
/// that dead token and signs the account out; each such `load` writes it again, and a write that
/// succeeds ends the keeping. It is forgotten, never written, when the store no longer holds the
/// account's refresh token (a `logout`, `revoke` or rejected grant since) or holds a newer one
/// (`DocumentAge`: a new sign-in).
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
    let stored = try await base.load(key)
    guard key.kind == .refreshToken, let kept = cache.unwritten.kept(key.account) else { return stored }
    guard let stored, Self.isOlder(stored, than: kept.document) else {
      cache.unwritten.forget(key.account, kept)
      return stored
    }
    if (try? await base.save(key, label: kept.label, secret: kept.document)) != nil { cache.unwritten.forget(key.account, kept) }
    return kept.document
  }

  public func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    try allow(key.account)
    guard key.kind == .refreshToken else { return try await base.save(key, label: label, secret: secret) }
    do {
      try await base.save(key, label: label, secret: secret)
    } catch {
      cache.unwritten.keep(key.account, .init(label: label, document: secret))
      throw error
    }
    cache.unwritten.forget(key.account)
  }

  public func preflightWrite(for key: ItemKey?) async throws { try await base.preflightWrite(for: key) }

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

  /// True when `a`'s document is older than `b`'s (`DocumentAge`; one that does not tell is older).
  private static func isOlder(_ a: Secret, than b: Secret) -> Bool {
    guard let ageB = DocumentAge(document: Array(b.revealed.utf8)) else { return false }
    guard let ageA = DocumentAge(document: Array(a.revealed.utf8)) else { return true }
    return ageA < ageB
  }

  private func allow(_ account: String) throws {
    if let only, !only.contains(account) { throw ForwardRefusal.accountNotForwarded(account: account) }
  }
}
