import BrokerCore
import BrokerProviders
import Synchronization

/// Where a registry token is kept: the account that exchanged it and the registry (`name[:port]`).
public struct RegistryTokenKey: Sendable, Hashable {
  public var account: String
  public var host: String
  public init(account: String, host: String) {
    self.account = account
    self.host = host
  }
}

/// The agent's Azure Container Registry tokens (interface.md §5), in memory only, never in a store.
///
/// - A token is handed out again until `RegistryToken.servedUntil` (five minutes before its JWT
///   `exp`) while the account's configuration is the one it was exchanged under; a token without
///   `exp` is never kept.
/// - One exchange per key runs at a time; every caller for that key arriving meanwhile shares it.
/// - `drop(account:)` (logout, login, a store change: `TokenCache.drop`) forgets the account's
///   tokens; an exchange running then is not kept.
public final class RegistryTokenCache: Sendable {
  private struct Entry {
    var token: RegistryToken
    var account: AccountConfig
    var servedUntil: Int64
  }
  private struct Flight {
    var id: Int
    var task: Task<RegistryToken, any Error>
  }
  private struct State {
    var entries: [RegistryTokenKey: Entry] = [:]
    var flights: [RegistryTokenKey: Flight] = [:]
    var generations: [String: Int] = [:]
    var nextID = 0
  }
  private let state = Mutex(State())
  private let time: any TimeSource

  public init(time: any TimeSource) { self.time = time }

  /// The token kept for `key` when memory may still hand it out under `account`, else nil.
  public func cached(_ key: RegistryTokenKey, account: AccountConfig) -> RegistryToken? {
    let now = time.now
    return state.withLock { s in
      guard let entry = s.entries[key], entry.account == account, now <= entry.servedUntil else { return nil }
      return entry.token
    }
  }

  /// The kept token for `key`, else the result of the running exchange for it, else of a new one.
  /// - Parameter exchange: obtains a token (`AzureRegistryExchange.exchange`).
  /// - Throws: what `exchange` throws, to every caller sharing it; nothing is kept then.
  public func token(
    for key: RegistryTokenKey, account: AccountConfig, exchange: @escaping @Sendable () async throws -> RegistryToken
  ) async throws -> RegistryToken {
    if let token = cached(key, account: account) { return token }
    let task = state.withLock { s -> Task<RegistryToken, any Error> in
      if let flight = s.flights[key] { return flight.task }
      s.nextID += 1
      let (id, generation) = (s.nextID, s.generations[key.account, default: 0])
      let task = Task<RegistryToken, any Error> {
        do {
          let token = try await exchange()
          self.finish(key, id: id, generation: generation, token: token, account: account)
          return token
        } catch {
          self.finish(key, id: id, generation: generation, token: nil, account: account)
          throw error
        }
      }
      s.flights[key] = Flight(id: id, task: task)
      return task
    }
    return try await task.value
  }

  /// Forgets the tokens of `account` (of every account when nil); an exchange running now is not
  /// kept when it ends.
  public func drop(account: String?) {
    state.withLock { s in
      let names = account.map { [$0] } ?? Array(Set(s.entries.keys.map(\.account)).union(s.flights.keys.map(\.account)))
      for name in names { s.generations[name, default: 0] += 1 }
      s.entries = s.entries.filter { key, _ in account != nil && key.account != account }
      s.flights = s.flights.filter { key, _ in account != nil && key.account != account }
    }
  }

  /// How many tokens are kept (tests).
  public var count: Int { state.withLock { $0.entries.count } }

  private func finish(_ key: RegistryTokenKey, id: Int, generation: Int, token: RegistryToken?, account: AccountConfig) {
    let now = time.now
    state.withLock { s in
      if s.flights[key]?.id == id { s.flights[key] = nil }
      guard let token, let servedUntil = token.servedUntil, servedUntil > now,
        s.generations[key.account, default: 0] == generation
      else { return }
      s.entries[key] = Entry(token: token, account: account, servedUntil: servedUntil)
      // Memory stays bounded over a long life: past a handful, the expired ones go.
      if s.entries.count > 64 { s.entries = s.entries.filter { $0.value.servedUntil >= now } }
    }
  }
}
