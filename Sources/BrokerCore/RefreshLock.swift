import Synchronization

/// Mutual exclusion of one account's refreshes across processes (interface.md §8), and the holds a
/// throttling provider asks for (interface.md §6): held around "re-read the stored refresh token,
/// refresh, store", so that two processes never redeem the same refresh token, which providers with
/// strict rotation answer with `invalid_grant`; and consulted before every refresh, so that no
/// caller of a throttled account (in this process or another, with or without the agent) asks the
/// provider again before the hold ends.
public protocol RefreshLock: Sendable {
  /// Runs `body` while holding the lock of `account`, first waiting for any other holder (in this
  /// process or another) to release it. Never blocks a thread of the cooperative pool.
  /// - Throws: what `body` throws; the implementation's error when the lock cannot be taken.
  func withLock<T: Sendable>(account: String, _ body: () async throws -> T) async throws -> T

  /// The hold in force for `account` at `now` (Unix seconds), or nil: none recorded, it has
  /// ended, or it cannot be read (a hold is advice; an unreadable one never stops a refresh).
  func hold(account: String, now: Int64) -> RefreshHold?

  /// Records `hold` for `account`, replacing any earlier one; nil removes it. Best effort: a hold
  /// that cannot be written is lost, never an error for the caller.
  func setHold(_ hold: RefreshHold?, account: String)
}

/// A provider's word to wait before the next refresh of an account: a 429 with `Retry-After`
/// (RFC 6585 §4, RFC 9110 §10.2.3) or a documented throttle reply (Entra's AADSTS50196).
public struct RefreshHold: Sendable, Equatable {
  /// Unix seconds until which no refresh request is sent.
  public var until: Int64
  /// `host[:port]` of the endpoint that throttled, for messages.
  public var host: String
  /// What the provider said (the OAuth error summary or the HTTP status); never a secret.
  public var reason: String

  public init(until: Int64, host: String, reason: String) {
    self.until = until
    self.host = host
    self.reason = reason
  }
}

/// No lock across processes, and holds kept in this process's memory: for tests of one process,
/// and when no runtime directory can be used.
public struct NoRefreshLock: RefreshLock {
  private final class Holds: Sendable {
    let table = Mutex<[String: RefreshHold]>([:])
  }
  private let holds = Holds()

  public init() {}
  public func withLock<T: Sendable>(account: String, _ body: () async throws -> T) async throws -> T {
    try await body()
  }
  public func hold(account: String, now: Int64) -> RefreshHold? {
    holds.table.withLock { $0[account] }.flatMap { $0.until > now ? $0 : nil }
  }
  public func setHold(_ hold: RefreshHold?, account: String) {
    holds.table.withLock { $0[account] = hold }
  }
}
