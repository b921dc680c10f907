import BrokerCore

/// Parses `Set-Cookie` header values (RFC 6265 §5.2) into `StoredCookie`s.
enum SetCookie {
  /// One `Set-Cookie` value; nil when it has no `name=value` pair.
  /// - Parameters:
  ///   - defaultDomain: the host the response came from (used when there is no `Domain`).
  ///   - now: Unix seconds, for `Max-Age`.
  static func parse(_ header: String, defaultDomain: String, now: Int64) -> StoredCookie? {
    let parts = header.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
    guard let first = parts.first, let eq = first.firstIndex(of: "=") else { return nil }
    let name = String(first[..<eq]).trimmingSpaces()
    guard !name.isEmpty else { return nil }
    var cookie = StoredCookie(
      name: name, value: Secret(String(first[first.index(after: eq)...]).trimmingSpaces()), domain: defaultDomain,
      expires: 0, httpOnly: false, secure: false)
    var maxAge: Int64?
    for attribute in parts.dropFirst() {
      let kv = attribute.split(separator: "=", maxSplits: 1).map { String($0).trimmingSpaces() }
      let value = kv.count > 1 ? kv[1] : ""
      switch kv.first?.lowercased() ?? "" {
      case "expires": if let t = HTTPDate.parse(value) { cookie.expires = OutsideTime.bounded(t) }
      case "max-age": maxAge = Int64(value).map(OutsideTime.bounded)
      case "path": if value.hasPrefix("/") { cookie.path = value }
      case "domain":
        let d = value.hasPrefix(".") ? String(value.dropFirst()) : value
        if !d.isEmpty { cookie.domain = d.lowercased() }
      case "secure": cookie.secure = true
      case "httponly": cookie.httpOnly = true
      default: break
      }
    }
    if let maxAge { cookie.expires = now + max(maxAge, 0) }
    return cookie
  }
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the `-` separated cookie and RFC 850 variants
/// (`Sun, 06-Nov-1994 08:49:37 GMT`, `Sunday, 06-Nov-94 …`) and asctime, to Unix seconds.
enum HTTPDate {
  static func parse(_ text: String) -> Int64? {
    let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    let tokens = text.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == "," }).map { $0.lowercased() }
    var day: Int64?, month: Int64?, year: Int64?, hms: [Int64]?
    for t in tokens {
      if t.contains(":") {
        let p = t.split(separator: ":").compactMap { Int64($0) }
        if p.count == 3 { hms = p }
      } else if let m = months.firstIndex(of: String(t.prefix(3))), t.count >= 3, Int(t) == nil {
        month = Int64(m + 1)
      } else if let n = Int64(t) {
        if day == nil && t.count <= 2 { day = n } else { year = n < 100 ? n + (n < 70 ? 2000 : 1900) : n }
      }
    }
    guard let d = day, let m = month, let y = year, let hms, (1...31).contains(d), hms[0] < 24, hms[1] < 60, hms[2] < 61
    else { return nil }
    return daysFromCivil(y, m, d) * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2]
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
  static func daysFromCivil(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
    let y = m <= 2 ? y0 - 1 : y0
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }
}
