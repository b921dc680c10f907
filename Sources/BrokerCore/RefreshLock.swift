/// Mutual exclusion of one account's refreshes across processes (interface.md §8, issue 13 item
/// 7): held around "re-read the stored refresh token, refresh, store", so that two processes never
/// redeem the same refresh token, which providers with strict rotation answer with `invalid_grant`.
public protocol RefreshLock: Sendable {
  /// Runs `body` while holding the lock of `account`, first waiting for any other holder (in this
  /// process or another) to release it. Never blocks a thread of the cooperative pool.
  /// - Throws: what `body` throws; the implementation's error when the lock cannot be taken.
  func withLock<T: Sendable>(account: String, _ body: () async throws -> T) async throws -> T
}

/// No lock: for tests of one process, and when no runtime directory can be used.
public struct NoRefreshLock: RefreshLock {
  public init() {}
  public func withLock<T: Sendable>(account: String, _ body: () async throws -> T) async throws -> T {
    try await body()
  }
}
