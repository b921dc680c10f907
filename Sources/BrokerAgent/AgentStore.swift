import BrokerCore

/// The store as commands inside the agent use it: a refresh token deleted here (an
/// `invalid_grant` met by a refresh the agent runs) also drops every access token of that account
/// from the agent's memory, whatever its scope set (bug-cases.md B20). Outside the agent,
/// the CLI's `AgentNoticeStore` does the same by a message to the agent.
public struct AgentStore: SecretStore {
  public let base: any SecretStore
  public let cache: TokenCache

  public init(base: any SecretStore, cache: TokenCache) {
    self.base = base
    self.cache = cache
  }

  public func load(_ key: ItemKey) async throws -> Secret? { try await base.load(key) }

  public func save(_ key: ItemKey, label: String, secret: Secret) async throws {
    try await base.save(key, label: label, secret: secret)
  }

  public func delete(_ key: ItemKey) async throws {
    guard key.kind == .refreshToken else { return try await base.delete(key) }
    do {
      try await base.delete(key)
    } catch {
      await cache.drop(account: key.account)  // it may be gone all the same
      throw error
    }
    await cache.drop(account: key.account)
  }

  public func keys(account: String?) async throws -> [ItemKey] { try await base.keys(account: account) }
}
