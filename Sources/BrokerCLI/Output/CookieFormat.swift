import BrokerCore
import BrokerProviders

/// The `token get --format` renderings of cookies (interface.md §3, protocols.md §7.4).
enum CookieFormat {
  /// The text to print on stdout, ending with a newline.
  /// - Throws: `UsageError` for formats that carry a bearer token only (`env`, `exec-credential`,
  ///   `xoauth2`, `oauthbearer`).
  static func render(_ format: TokenFormat, _ c: IssuedCookies, usage: String) throws -> String {
    switch format {
    case .token: return c.pairs + "\n"
    case .header: return "Cookie: " + c.pairs + "\n"
    case .cookiejar: return jar(c)
    case .json:
      struct Cookie: Encodable {
        var name, value, domain, path: String
        var expires: Int64
        var http_only, secure: Bool
      }
      struct Doc: Encodable {
        var account, provider, token_type: String
        var expires_on: Int64
        var cookies: [Cookie]
      }
      let cookies = c.cookies.map {
        Cookie(
          name: $0.name, value: $0.value.revealed, domain: $0.domain, path: $0.path, expires: $0.expires,
          http_only: $0.httpOnly, secure: $0.secure)
      }
      return JSONText.encode(
        Doc(account: c.account, provider: "sharepoint", token_type: "cookies", expires_on: c.expiresOn, cookies: cookies)) + "\n"
    case .env, .execCredential, .xoauth2, .oauthbearer:
      throw UsageError(
        "'\(c.account)' hands out cookies; use --format token, header, json or cookiejar", usage: usage)
    }
  }

  /// A Netscape cookie file: `#HttpOnly_` prefix for HttpOnly cookies, a leading `.` (and
  /// include-subdomains TRUE) only for domain cookies, expiry in Unix seconds (0: session).
  static func jar(_ c: IssuedCookies) -> String {
    var out = "# Netscape HTTP Cookie File\n# written by tokenbroker for \(c.site); do not edit\n\n"
    for k in c.cookies {
      let domain = (k.httpOnly ? "#HttpOnly_" : "") + k.domain
      let fields = [
        domain, k.domain.hasPrefix(".") ? "TRUE" : "FALSE", k.path, k.secure ? "TRUE" : "FALSE", String(k.expires), k.name,
        k.value.revealed,
      ]
      out += fields.joined(separator: "\t") + "\n"
    }
    return out
  }
}
