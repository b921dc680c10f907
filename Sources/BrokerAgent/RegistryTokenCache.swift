import BrokerCore
import BrokerProviders

/// Where a registry token is kept: the account that exchanged it and the registry (`name[:port]`).
public struct RegistryTokenKey: Sendable, Hashable {
  public var account: String
  public var host: String
  public init(account: String, host: String) {
    self.account = account
    self.host = host
  }
}

/// The agent's Azure Container Registry tokens (interface.md §5), in memory only, never in a
/// store: a `SingleFlightCache` of `RegistryToken`s that expire at their `servedUntil`.
///
/// - A token is handed out again until `RegistryToken.servedUntil` (five minutes before its JWT
///   `exp`) while the account's configuration is the one it was exchanged under; a token without
///   `exp` is never kept.
/// - One exchange per key runs at a time; every caller for that key arriving meanwhile shares it.
/// - `drop(account:)` (with the account's access tokens: `TokenCache.drop`) forgets the account's
///   tokens; an exchange running then is not kept.
public final class RegistryTokenCache: Sendable {
  private let tokens: SingleFlightCache<RegistryTokenKey, RegistryToken>

  public init(time: any TimeSource) { tokens = SingleFlightCache(time: time, expiry: { $0.servedUntil }) }

  /// The token kept for `key` when memory may still hand it out under `account`, else nil.
  public func cached(_ key: RegistryTokenKey, account: AccountConfig) -> RegistryToken? {
    tokens.cached(key, account: account)?.value
  }

  /// The kept token for `key`, else the result of the running exchange for it, else of a new one.
  /// - Parameter exchange: obtains a token (`AzureRegistryExchange.exchange`).
  /// - Throws: what `exchange` throws, to every caller sharing it; nothing is kept then.
  public func token(
    for key: RegistryTokenKey, account: AccountConfig, exchange: @escaping @Sendable () async throws -> RegistryToken
  ) async throws -> RegistryToken {
    try await tokens.value(for: key, account: account) { _ in try await exchange() }
  }

  /// Forgets the tokens of `account` (of every account when nil); an exchange running now is not
  /// kept when it ends.
  public func drop(account: String?) { tokens.drop(account: account) }

  /// How many tokens are kept (tests).
  public var count: Int { tokens.count }
}

extension RegistryTokenKey: AccountScopedKey {}
