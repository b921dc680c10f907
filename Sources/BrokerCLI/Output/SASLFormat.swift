import Foundation

/// The SASL initial client responses that carry an access token, base64 (RFC 4648 §4) on one line,
/// for `token get --format xoauth2 | oauthbearer` (README, "Mail clients"): what an integration
/// that builds no SASL message itself sends (Emacs smtpmail, exim, `openssl s_client`).
/// - XOAUTH2 (Google's "OAuth 2.0 Mechanism", Microsoft's "Authenticate an IMAP, POP or SMTP
///   connection using OAuth"): `user=U ^Aauth=Bearer T ^A^A`.
/// - OAUTHBEARER (RFC 7628 §3.1): the GS2 header `n,a=U,` (RFC 5801 §4: `=` and `,` in U written
///   `=3D` and `=2C`), then `host=H`, `port=P` (each left out when not given, as §3.1 allows) and
///   `auth=Bearer T`, each ended by ^A, and a final ^A.
enum SASLFormat {
  /// Which of the two.
  enum Mechanism: String { case xoauth2, oauthbearer }

  /// The line to print, ending with a newline.
  /// - Parameters:
  ///   - user: the mailbox's user name (`--user`, else the account's identity).
  ///   - host, port: the server's, for OAUTHBEARER only; nil leaves the pair out.
  static func render(_ mechanism: Mechanism, token: String, user: String, host: String?, port: Int?) -> String {
    let message: String
    switch mechanism {
    case .xoauth2:
      message = "user=\(user)\u{1}auth=Bearer \(token)\u{1}\u{1}"
    case .oauthbearer:
      let name = user.replacing("=", with: "=3D").replacing(",", with: "=2C")
      var pairs = ""
      if let host { pairs += "host=\(host)\u{1}" }
      if let port { pairs += "port=\(port)\u{1}" }
      message = "n,a=\(name),\u{1}\(pairs)auth=Bearer \(token)\u{1}\u{1}"
    }
    return Data(message.utf8).base64EncodedString() + "\n"
  }
}
