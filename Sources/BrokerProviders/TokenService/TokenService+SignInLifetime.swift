import BrokerCore

/// Refresh-token lifetimes the provider states (interface.md §3 `status`): Google's
/// `refresh_token_expires_in` (an OAuth consent screen in "Testing" publishing status gives 7
/// days), Keycloak's `refresh_expires_in`. tokenbroker cannot extend them; it says so at sign-in,
/// in the last day, and when the grant dies at that time.
extension TokenService {
  /// `login` warns when the sign-in lasts less than this, in seconds (30 days).
  static let shortSignIn: Int64 = 30 * 86400
  /// `token get` warns when less than this is left, in seconds (a day, as for imported cookies).
  static let signInEndingSoon: Int64 = 86400

  /// After a sign-in: warns when `record`'s stated expiry is less than `shortSignIn` away.
  func warnIfSignInIsShort(_ record: RefreshTokenRecord, account: AccountConfig) {
    guard let expiresOn = record.expiresOn, expiresOn - time.now < Self.shortSignIn else { return }
    warn(
      "\(Providers.tokenHost(for: account)) says the sign-in of '\(account.name)' ends in "
        + "\(Self.span(expiresOn - time.now)) (refresh token lifetime); "
        + Self.lifetimeRemedy(account, then: "sign in again before then"))
  }

  /// Before handing out a token: warns when `record`'s stated expiry is within `signInEndingSoon`.
  func warnIfSignInEndsSoon(_ record: RefreshTokenRecord, account: AccountConfig) {
    guard let expiresOn = record.expiresOn, expiresOn > time.now, expiresOn - time.now < Self.signInEndingSoon
    else { return }
    warn(
      "the sign-in of '\(account.name)' ends in \(Self.span(expiresOn - time.now)), the refresh token lifetime "
        + "\(Providers.tokenHost(for: account)) set; "
        + Self.lifetimeRemedy(account, then: "run 'tokenbroker login \(account.name)' before then"))
  }

  /// The reason of a rejected refresh token whose stated expiry has passed: the provider's time
  /// limit, not a revocation; nil when it has none or it has not passed.
  func timeLimitReason(_ record: RefreshTokenRecord, account: AccountConfig) -> String? {
    guard let expiresOn = record.expiresOn, expiresOn <= time.now else { return nil }
    let lasted = Self.span(expiresOn - record.obtainedAt)
    return "the refresh token reached the time limit \(Providers.tokenHost(for: account)) set for it (\(lasted) after "
      + "the sign-in); " + Self.lifetimeRemedy(account, then: "a new sign-in starts another")
  }

  /// What the user can do about a stated lifetime: for Google, publish the consent screen.
  static func lifetimeRemedy(_ account: AccountConfig, then: String) -> String {
    guard account.provider == .google else { return then }
    return "an OAuth consent screen in 'Testing' publishing status limits Google sign-ins to 7 days: set it to "
      + "'In production' (Google Cloud console, APIs & Services, OAuth consent screen), then sign in again; else \(then)"
  }

  /// `seconds` as days, hours or minutes, rounded down (`6 days 23 h`, `5 h`, `12 min`).
  static func span(_ seconds: Int64) -> String {
    let s = max(0, seconds)
    if s >= 2 * 86400 { return "\(s / 86400) days" + (s % 86400 >= 3600 ? " \(s % 86400 / 3600) h" : "") }
    if s >= 3600 { return "\(s / 3600) h" + (s % 3600 >= 60 ? " \(s % 3600 / 60) min" : "") }
    return "\(s / 60) min"
  }
}
