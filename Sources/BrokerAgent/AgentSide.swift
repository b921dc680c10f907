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

  public init(cache: TokenCache, keys: StoreKeyHolder, config: BrokerConfig, recorder: AnswerRecorder) {
    self.cache = cache
    self.keys = keys
    self.config = config
    self.recorder = recorder
  }

  /// Where the command's access tokens come from.
  public var tokenSource: SharedTokenSource { SharedTokenSource(cache: cache, recorder: recorder) }
}
