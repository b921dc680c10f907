import BrokerCore
import FoundationEssentials

/// Reads the claims of an OpenID Connect ID token (a JWS, RFC 7515 compact form).
///
/// The signature is not checked: the token came over TLS straight from the token endpoint, which
/// OpenID Connect Core §3.1.3.7 (item 6) allows in place of validating it. Used only to name who
/// signed in, never for an access decision.
enum IDToken {
  /// The identity in `jwt`'s payload, or nil when it is not a readable JWS or has none of the claims.
  static func identity(from jwt: String) -> Identity? {
    let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let payload = base64URLDecode(parts[1]),
      let claims = JSONText.decode(Claims.self, bytes: payload)
    else { return nil }
    let id = Identity(
      username: claims.preferredUsername ?? claims.email ?? claims.upn, objectID: claims.oid, tenantID: claims.tid,
      subject: claims.sub)
    return id == Identity() ? nil : id
  }

  /// `text` without control characters (C0, DEL, C1): claims are shown on terminals, stored as the
  /// identity and sent to git as the username (protocols.md §1.7 rules 2 and 6).
  static func printable(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { !($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) }))
  }

  /// base64url without padding (RFC 4648 §5; RFC 7515 §2).
  static func base64URLDecode(_ text: Substring) -> [UInt8]? {
    var s = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
    while s.count % 4 != 0 { s += "=" }
    return Data(base64Encoded: s).map { Array($0) }
  }

  private struct Claims: Decodable {
    var preferredUsername: String?
    var email: String?
    var upn: String?
    var oid: String?
    var tid: String?
    var sub: String?

    enum CodingKeys: String, CodingKey {
      case email, upn, oid, tid, sub
      case preferredUsername = "preferred_username"
    }

    init(from decoder: any Decoder) throws {
      let c = try decoder.container(keyedBy: CodingKeys.self)
      func text(_ k: CodingKeys) -> String? {
        c.lenientString(k).map(IDToken.printable).flatMap { $0.isEmpty ? nil : $0 }
      }
      preferredUsername = text(.preferredUsername)
      email = text(.email)
      upn = text(.upn)
      oid = text(.oid)
      tid = text(.tid)
      sub = text(.sub)
    }
  }
}
