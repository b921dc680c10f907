import BrokerCore

extension TokenService {
  /// The account's state (interface.md §8.1): `signed-in` while a refresh token is stored, else
  /// what was recorded when it went (`AccountState.withoutRefreshToken`). A recorded state never
  /// outweighs a stored refresh token, so a state left behind cannot sign anyone out.
  /// - Throws: `ConfigError.unknownAccount`; `StoreError` (a locked keyring says nothing of the
  ///   sign-in).
  public func accountState(account name: String) async throws -> AccountState {
    _ = try config.requireAccount(name)
    if try await loadRefreshRecord(name) != nil { return .signedIn }
    return AccountState.withoutRefreshToken(recorded: accountStates.recorded(account: name), now: time.now)
  }

  /// Records that `account` was signed out by the user (`logout`, `revoke`): never notified.
  public func recordSignedOut(account name: String) {
    accountStates.record(.signedOut(since: time.now), account: name)
  }

  /// What every caller of an account without a refresh token is told (interface.md §8.1): exit 3,
  /// one line naming the account, why a sign-in is needed and since when, what the user has
  /// been told, and `tokenbroker login ACCOUNT`; an account signed out or never signed in is
  /// "not signed in".
  func signInNeeded(_ name: String) -> ProviderError {
    let state = AccountState.withoutRefreshToken(recorded: accountStates.recorded(account: name), now: time.now)
    guard let need = state.need, need.reason != .neverSignedIn else {
      return .signInRequired(account: name, reason: ProviderError.notSignedIn)
    }
    var reason = need.detail ?? Self.phrase(need.reason)
    if let since = need.since { reason += " at \(LocalTime.hoursMinutes(since))" }
    if let progress = state.progress { reason += "; \(progress)" }
    return .signInRequired(account: name, reason: reason)
  }

  /// Records the dead grant of `account` before its refresh token is deleted (so a reader in
  /// between still finds the token, never a signed-in account without a state).
  func recordSignInNeeded(account name: String, reason: SignInReason, detail: String, identity: String?) {
    diagnostics.note("'\(name)' needs signing in again (\(reason.rawValue)); recorded in the runtime directory")
    accountStates.record(
      .signInNeeded(SignInNeed(since: time.now, reason: reason, detail: detail, identity: identity)), account: name)
  }

  static func phrase(_ reason: SignInReason) -> String {
    switch reason {
    case .rejected: "the refresh token was rejected"
    case .revoked: "the sign-in was revoked at the provider"
    case .expired: "the refresh token expired"
    case .neverSignedIn: ProviderError.notSignedIn
    }
  }
}
