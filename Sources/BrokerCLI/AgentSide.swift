import BrokerAgent
import BrokerCore

/// What a command run inside the agent is given (`ProcessContext.agent`): the one thing that
/// says "inside the agent"; no user tells it from the type of a token source.
struct AgentSide: Sendable {
  /// The agent's access tokens: tokens come from it (`SharedTokenSource`) and store changes drop
  /// from it directly (`AgentStore`), never through a notice to an agent.
  var cache: TokenCache
  /// The encrypted store's key the agent holds.
  var keys: StoreKeyHolder
  /// The config as this request found it (`AgentConfigCache`, its files read once per request),
  /// so the command does not read them again.
  var config: BrokerConfig
  /// Whether this command's answer may be kept (`AnswerRecorder`).
  var recorder: AnswerRecorder

  /// Where the command's access tokens come from.
  var tokenSource: SharedTokenSource { SharedTokenSource(cache: cache, recorder: recorder) }
}
