/// Times and durations that come from outside (a provider's reply, an HTTP header, a JWT claim, a
/// document a keyring hands back) are bounded before any arithmetic: within ±2^40 seconds (about
/// 34,800 years), so that no sum or difference of two of them and the clock can overflow, which in
/// Swift stops the program. A refresh whose reply said `"expires_in": 9223372036854775807` stopped
/// tokenbroker after the provider had rotated the refresh token, and the new one was lost (found by
/// `make fuzz`, target token-reply).
public enum OutsideTime {
  /// The largest magnitude kept, in seconds.
  public static let limit: Int64 = 1 << 40

  /// `seconds` (Unix time or a duration), clamped to ±`limit`.
  public static func bounded(_ seconds: Int64) -> Int64 { min(max(seconds, -limit), limit) }

  /// `seconds`, clamped to ±`limit`.
  public static func bounded(_ seconds: Int) -> Int { Int(bounded(Int64(seconds))) }

  /// Whole seconds of `value` rounded up, clamped to ±`limit`; nil when it is not finite.
  public static func bounded(_ value: Double) -> Int64? {
    guard value.isFinite else { return nil }
    return Int64(min(max(value.rounded(.up), -Double(limit)), Double(limit)))
  }
}
