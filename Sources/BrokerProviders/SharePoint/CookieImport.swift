import BrokerCore

/// Reads cookies a user exported from a browser (interface.md §3 `--cookies-from FILE`): a
/// Netscape cookie file (protocols.md §7.4) or one `Cookie:` header line (`Cookie: a=1; b=2`, the
/// `Cookie:` prefix optional).
enum CookieImport {
  /// The cookies for `site` in `text`. Netscape lines for other domains are skipped; header pairs
  /// get the site's host as domain and `fallbackExpiry` (Unix seconds) as expiry, as do Netscape
  /// session cookies (expiry 0).
  static func parse(_ text: String, site: SharePointSite, fallbackExpiry: Int64) -> [StoredCookie] {
    let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map { String($0).trimmingSpaces() }
    let netscape = lines.filter { ($0.hasPrefix("#HttpOnly_") || !$0.hasPrefix("#")) && $0.split(separator: "\t", omittingEmptySubsequences: false).count == 7 }
    if !netscape.isEmpty {
      return netscape.compactMap { netscapeLine($0, site: site, fallbackExpiry: fallbackExpiry) }
    }
    guard var line = lines.first(where: { !$0.isEmpty && !$0.hasPrefix("#") }) else { return [] }
    if line.lowercased().hasPrefix("cookie:") { line = String(line.dropFirst("cookie:".count)) }
    return line.split(separator: ";").compactMap { pair in
      let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).trimmingSpaces() }
      guard kv.count == 2, !kv[0].isEmpty, !kv[1].isEmpty else { return nil }
      return StoredCookie(name: kv[0], value: Secret(kv[1]), domain: site.host, expires: fallbackExpiry, httpOnly: true, secure: site.secure)
    }
  }

  private static func netscapeLine(_ line: String, site: SharePointSite, fallbackExpiry: Int64) -> StoredCookie? {
    let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    var domain = f[0]
    let httpOnly = domain.hasPrefix("#HttpOnly_")
    if httpOnly { domain = String(domain.dropFirst("#HttpOnly_".count)) }
    domain = domain.lowercased()
    let bare = domain.hasPrefix(".") ? String(domain.dropFirst()) : domain
    guard site.host == bare || site.host.hasSuffix("." + bare), !f[5].isEmpty, !f[6].isEmpty, let expires = Int64(f[4]) else {
      return nil
    }
    return StoredCookie(
      name: f[5], value: Secret(f[6]), domain: domain, path: f[2].isEmpty ? "/" : f[2],
      expires: expires == 0 ? fallbackExpiry : expires, httpOnly: httpOnly, secure: f[3].uppercased() == "TRUE")
  }
}
