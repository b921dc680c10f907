import BrokerCore
import Synchronization

/// Refresh-token documents the agent could not write to the store, one per account, kept in
/// memory until a write succeeds (`AgentStore`, which owns the rule). Never written anywhere else
/// and never handed to a caller.
public final class UnwrittenRefreshTokens: Sendable {
  public struct Kept: Sendable, Equatable {
    public var label: String
    public var document: Secret
  }

  private let kept = Mutex<[String: Kept]>([:])

  public init() {}

  /// The document kept for `account`, or nil.
  public func kept(_ account: String) -> Kept? { kept.withLock { $0[account] } }

  /// Keeps `document` for `account`, in place of any kept before.
  func keep(_ account: String, _ document: Kept) { kept.withLock { $0[account] = document } }

  /// Forgets what is kept for `account` when it is still `document` (nil: whatever it is).
  func forget(_ account: String, _ document: Kept? = nil) {
    kept.withLock { all in
      if document == nil || all[account] == document { all[account] = nil }
    }
  }

  /// How many accounts have a kept document (tests, status).
  public var count: Int { kept.withLock { $0.count } }
}
