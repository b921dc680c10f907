import BrokerCore

/// What a command run inside the agent is given (the CLI's `ProcessContext.agent`): the one thing
/// that says "inside the agent"; no user tells it from the type of a token source.
public struct AgentSide: Sendable {
  /// The agent's access tokens: tokens come from it (`SharedTokenSource`) and store changes drop
  /// from it directly (`AgentStore`), never through a notice to an agent.
  public var cache: TokenCache
  /// The encrypted store's key the agent holds.
  public var keys: StoreKeyHolder
  /// The config as this request found it (`AgentConfigCache`, its files read once per request),
  /// so the command does not read them again.
  public var config: BrokerConfig
  /// Whether this command's answer may be kept (`AnswerRecorder`).
  public var recorder: AnswerRecorder
  /// The request came on the forwarding socket (interface.md §8): only the tokens of accounts
  /// with `forward = yes`, from memory (`tokenSource`) and from the store (`store(over:)`) alike.
  public var forwarded: Bool
  /// The agent's notifications of accounts that need signing in (interface.md §8.1); nil for a
  /// forwarded request.
  public var notices: SignInNotices?

  public init(
    cache: TokenCache, keys: StoreKeyHolder, config: BrokerConfig, recorder: AnswerRecorder, forwarded: Bool = false,
    notices: SignInNotices? = nil
  ) {
    self.cache = cache
    self.keys = keys
    self.config = config
    self.recorder = recorder
    self.forwarded = forwarded
    self.notices = notices
  }

  /// Where the command's access tokens come from.
  public var tokenSource: SharedTokenSource { SharedTokenSource(cache: cache, recorder: recorder, forwarded: forwarded) }

  /// The registry tokens the agent keeps (`RegistryTokenCache`), for `account`'s use.
  /// - Throws: `ForwardRefusal.accountNotForwarded` for a forwarded request of an account
  ///   without `forward = yes`.
  public func registryTokens(for account: AccountConfig) throws -> RegistryTokenCache {
    guard !forwarded || account.forward else { throw ForwardRefusal.accountNotForwarded(account: account.name) }
    return cache.registryTokens
  }

  /// The store as the command uses it (`AgentStore` over `base`, the configured store).
  public func store(over base: any SecretStore) -> AgentStore {
    AgentStore(base: base, cache: cache, config: config, only: forwarded ? config.accounts.filter(\.forward).map(\.name) : nil)
  }

  /// Forgets `account` (and its dependents) from the agent's memory: `AccountDrop`.
  public func drop(account: String) async { await AccountDrop.drop(account, from: cache, config: config) }
}
