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
      if let delay = Double(text), delay.isFinite { return clamp(Int64(delay.rounded(.up))) }
      if let date = httpDate(text) { return clamp(date - now) }
    }
    if let text = response.header("X-Rate-Limit-Reset")?.trimmingSpaces(), let reset = Int64(text) {
      return clamp(reset - now)
    }
    return nil
  }

  static func clamp(_ seconds: Int64) -> Int { Int(min(max(seconds, 1), Int64(maxSeconds))) }

  /// Unix seconds of an HTTP-date in any of RFC 9110 §5.6.7's three forms (IMF-fixdate
  /// `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`, asctime
  /// `Sun Nov  6 08:49:37 1994`); nil for anything else.
  static func httpDate(_ text: String) -> Int64? {
    let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    var day: Int64?, month: Int64?, year: Int64?, clock: [Int64]?
    for token in text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }) {
      if token.contains(":") {
        let parts = token.split(separator: ":").compactMap { Int64($0) }
        guard parts.count == 3 else { return nil }
        clock = parts
      } else if let number = Int64(token) {
        if token.count <= 2 && day == nil { day = number } else { year = token.count == 2 ? 2000 + number : number }
      } else if let index = months.firstIndex(of: token.lowercased()) {
        month = Int64(index + 1)
      }
    }
    guard let day, let month, let year, let clock, (1...31).contains(day), clock[0] < 24, clock[1] < 60,
      clock[2] < 61
    else { return nil }
    // RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is in the past century.
    let fullYear = year >= 2050 && year < 2100 && text.contains("-") ? year - 100 : year
    return daysFromCivil(fullYear, month, day) * 86400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
  static func daysFromCivil(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
    let y = m <= 2 ? y0 - 1 : y0
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146097 + doe - 719468
  }
}
