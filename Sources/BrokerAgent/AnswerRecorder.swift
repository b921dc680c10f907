import Synchronization

/// Whether the agent may keep one command's answer and give it again to the same request
/// (`TokenCache.keep`/`answer`): only when the command declared its output to depend on nothing
/// but the request, the config and the token it took (`outputIsPure`: git and docker `get`,
/// `token get` of a bearer token, whose times are absolute), and it took exactly one token, from
/// memory. The cache forgets kept answers on any change (refresh, drop, logout, login, git
/// `erase`), the config revision and the token's serving limit are checked on each use, and no
/// `--verbose` answer is ever kept.
public final class AnswerRecorder: Sendable {
  private struct State {
    var pure = false
    var takes = 0
    var hit: (revision: Int, servedUntil: Int64)?
  }
  private let state = Mutex(State())

  public init() {}

  /// The command's output depends on nothing but its request, the config and the token taken.
  public func outputIsPure() { state.withLock { $0.pure = true } }

  /// A token was taken: from memory at cache `revision`, served from memory until `servedUntil`
  /// (Unix seconds); or nil when it was fetched (refreshed, or read from the store).
  public func took(_ hit: (revision: Int, servedUntil: Int64)?) {
    state.withLock { s in
      s.takes += 1
      s.hit = hit
    }
  }

  /// The cache revision and serving limit of the one token taken from memory, when the answer
  /// may be kept.
  public var keepable: (revision: Int, servedUntil: Int64)? {
    state.withLock { s in s.pure && s.takes == 1 ? s.hit : nil }
  }
}
