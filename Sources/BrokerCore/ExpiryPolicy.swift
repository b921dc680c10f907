/// When an access token is good enough to hand out without a refresh (interface.md §2.1
/// `refresh-margin`).
///
/// A token must have `refresh-margin` seconds left, capped at half its lifetime: with tokens that
/// live less than twice the margin (a provider issuing 200 s tokens under the default 300 s), the
/// uncapped rule would refresh on every call. `--min-valid` is never capped: it is what the caller
/// needs, and a fresh token that cannot meet it is handed out all the same. Whatever the settings,
/// a cached token needs at least 1 s left: one at its expiry second is never handed out.
public enum ExpiryPolicy {
  /// Seconds a token must have left to be handed out without a refresh.
  /// - Parameters:
  ///   - refreshMargin: the `refresh-margin` setting, seconds.
  ///   - minValid: `--min-valid`, seconds, or nil.
  ///   - lifetime: the token's lifetime in seconds (expiry minus when it was obtained), or nil
  ///     when unknown (a token cached before this rule): the margin is then not capped.
  public static func needed(refreshMargin: Int, minValid: Int?, lifetime: Int64?) -> Int64 {
    var margin = Int64(refreshMargin)
    if let lifetime, lifetime > 0 { margin = min(margin, lifetime / 2) }
    return max(margin, Int64(minValid ?? 0), 1)
  }

  /// The warning, once per sign-in and scope set, for a token whose `lifetime` (seconds) is below
  /// `refreshMargin`; nil when it is not.
  public static func shortLifetimeWarning(account: String, lifetime: Int64, refreshMargin: Int) -> String? {
    guard lifetime >= 0, lifetime < Int64(refreshMargin) else { return nil }
    return "the provider issues access tokens of '\(account)' for \(lifetime) s, less than refresh-margin "
      + "(\(refreshMargin) s); they are refreshed when less than \(lifetime / 2) s are left (lower refresh-margin "
      + "in [broker] to silence this)"
  }
}
