import BrokerCore

/// How long a throttling server asks a client to wait, and how long tokenbroker then holds back
/// (interface.md §6; bug-cases-3.md X07).
enum ThrottleWait {
  /// The hold after a 429 that names no time: long enough that callers never loop on it.
  static let defaultSeconds = 30
  /// The hold after Entra's AADSTS50196 request-loop detection, which names no time; Microsoft's
  /// guidance is to wait about a minute (its client-credential throttle says `Retry-After: 60`).
  static let requestLoopSeconds = 60
  /// No hold is longer than this, whatever a server says (an hour: a mistyped header never blocks
  /// an account for days; the next refresh after it asks again).
  static let maxSeconds = 3600

  /// Seconds to wait from `now` (Unix seconds) that `response` names, at least 1 and at most
  /// `maxSeconds`: `Retry-After` as delay-seconds or as an HTTP-date (RFC 9110 §10.2.3), else
  /// Okta's `X-Rate-Limit-Reset` (Unix seconds when the limit resets); nil when it names none.
  static func seconds(_ response: HTTPResponse, now: Int64) -> Int? {
    if let text = response.header("Retry-After")?.trimmingSpaces(), !text.isEmpty {
      if let delay = Double(text).flatMap(OutsideTime.bounded) { return clamp(delay) }
      if let date = httpDate(text) { return clamp(OutsideTime.bounded(date) - now) }
    }
    if let text = response.header("X-Rate-Limit-Reset")?.trimmingSpaces(), let reset = Int64(text) {
      return clamp(OutsideTime.bounded(reset) - now)
    }
    return nil
  }

  static func clamp(_ seconds: Int64) -> Int { Int(min(max(seconds, 1), Int64(maxSeconds))) }

  /// Unix seconds of an HTTP-date in any of RFC 9110 §5.6.7's three forms (IMF-fixdate, RFC 850,
  /// asctime): `HTTPDate.parse`, which the cookie parser shares; nil for anything else.
  static func httpDate(_ text: String) -> Int64? { HTTPDate.parse(text) }
}
