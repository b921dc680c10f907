import BrokerCore
import BrokerProviders

/// The `token get --format` renderings of an access token (interface.md §3).
enum TokenFormat: String, CaseIterable {
  case token, header, json, env
  case execCredential = "exec-credential"
  /// A Netscape cookie file; cookie accounts only (`CookieFormat`).
  case cookiejar
  /// The SASL XOAUTH2 and OAUTHBEARER initial responses (`SASLFormat`); bearer tokens only.
  case xoauth2, oauthbearer

  /// The text to print on stdout, ending with a newline.
  /// `cookiejar` renders nothing here: it is for cookie accounts (`CookieFormat`), and
  /// `TokenCommand` refuses it for bearer tokens before rendering; `xoauth2` and `oauthbearer`
  /// neither: they need a user name, which `TokenCommand` gives `SASLFormat`.
  /// - Parameter execCredential: the ExecCredential apiVersion the caller expects.
  func render(_ t: IssuedToken, execCredential: ExecCredentialVersion = .v1) -> String {
    switch self {
    case .cookiejar, .xoauth2, .oauthbearer: return ""
    case .token: return t.accessToken.revealed + "\n"
    case .header: return "Authorization: Bearer " + t.accessToken.revealed + "\n"
    case .env:
      return "TOKENBROKER_ACCESS_TOKEN=" + Self.shellWord(t.accessToken.revealed) + "\nTOKENBROKER_EXPIRES_ON=\(t.expiresOn)\n"
    case .json:
      struct Doc: Encodable {
        var account, provider, token_type, access_token: String
        var expires_on: Int64
        var scopes: [String]
      }
      return JSONText.encode(
        Doc(
          account: t.account, provider: t.provider.rawValue, token_type: t.tokenType,
          access_token: t.accessToken.revealed, expires_on: t.expiresOn, scopes: t.scopes)) + "\n"
    case .execCredential: return execCredential.render(t)
    }
  }
}

extension TokenFormat {
  /// `s` as one POSIX shell word for `eval`: as it is when it holds only letters, digits and
  /// `-._+/=` (RFC 6750 §2.1's b64token, which real tokens use, without `~`, which an assignment
  /// expands), else in single quotes with each `'` written `'\''`. An access token is the
  /// server's text (RFC 6749 §A.12 allows any printable ASCII), and `$(...)` in it must not run.
  static func shellWord(_ s: String) -> String {
    let plain = !s.isEmpty && s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-._+/=".unicodeScalars.contains($0)) }
    return plain ? s : "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
  }
}

/// RFC 3339 timestamps in UTC.
enum RFC3339 {
  /// `YYYY-MM-DDTHH:MM:SSZ` for Unix seconds `t` (civil-from-days, proleptic Gregorian).
  static func utc(_ t: Int64) -> String {
    let days = t >= 0 ? t / 86400 : (t - 86399) / 86400
    let secs = t - days * 86400
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
    func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(y)-\(two(m))-\(two(d))T\(two(secs / 3600)):\(two(secs % 3600 / 60)):\(two(secs % 60))Z"
  }
}

/// Removes control characters (C0, DEL, C1) from text that came from a server before it reaches
/// a terminal (protocols.md §1.7 rule 6).
enum TerminalText {
  static func clean(_ s: String) -> String {
    String(String.UnicodeScalarView(s.unicodeScalars.filter { !($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) }))
  }
}
