import BrokerCore
import BrokerWire
import Synchronization

/// The agent's answer memo (`TokenCache.keep`/`answer`): whole answers to warm requests made
/// from cached tokens, given again to the byte-for-byte same request. Behind a lock rather than
/// inside the `TokenCache` actor, so the socket loop's own thread can answer a repeated request
/// without a hop to the cooperative pool (`AgentServer`'s `quick`).
///
/// `forget()` (every change of the cache's tokens) bumps the revision and drops every kept answer
/// in one step under the lock: an answer made from a token taken at an older revision is never
/// kept, and none is given after the change returns.
final class KeptAnswers: Sendable {
  private struct Kept {
    var reply: AgentReply
    var configRevision: Int
    /// Unix seconds: the last time memory still serves the token the answer was made from.
    var servedUntil: Int64
  }
  private struct State {
    var revision = 0
    var answers: [AgentRequest: Kept] = [:]
  }
  private let state = Mutex(State())
  private let time: any TimeSource

  /// At most this many answers are kept; one more forgets them all.
  static let capacity = 64

  init(time: any TimeSource) { self.time = time }

  /// Bumped by every `forget()`.
  var revision: Int { state.withLock { $0.revision } }

  /// How many answers are kept.
  var count: Int { state.withLock { $0.answers.count } }

  /// Whether an answer is kept for `request` (of any config revision, even one past its time).
  func contains(_ request: AgentRequest) -> Bool { state.withLock { $0.answers[request] != nil } }

  /// The answer kept for `request` while it is still the answer: made under config revision
  /// `configRevision` and its token still one memory would serve (an answer past that is dropped).
  func answer(to request: AgentRequest, configRevision: Int) -> AgentReply? {
    let now = time.now
    return state.withLock { s in
      guard let kept = s.answers[request], kept.configRevision == configRevision else { return nil }
      guard now <= kept.servedUntil else {
        s.answers[request] = nil
        return nil
      }
      return kept.reply
    }
  }

  /// Keeps `reply` to `request`, made from a token taken at cache `revision`; ignored when the
  /// cache has changed since.
  func keep(_ reply: AgentReply, to request: AgentRequest, configRevision: Int, revision: Int, servedUntil: Int64) {
    state.withLock { s in
      guard revision == s.revision else { return }
      if s.answers.count >= Self.capacity { s.answers.removeAll() }
      s.answers[request] = Kept(reply: reply, configRevision: configRevision, servedUntil: servedUntil)
    }
  }

  /// The cache changed: no answer made before stays (the secrets in them neither: none outlives
  /// a logout).
  func forget() {
    state.withLock { s in
      s.revision += 1
      s.answers.removeAll()
    }
  }
}
