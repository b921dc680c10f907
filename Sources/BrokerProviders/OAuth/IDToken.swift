import BrokerCore
import FoundationEssentials

/// Reads the claims of an OpenID Connect ID token (a JWS, RFC 7515 compact form), once: the
/// token reply keeps them (`TokenGrant.idToken`) for the OpenID checks and the identity.
///
/// The signature is not checked: the token came over TLS straight from the token endpoint, which
/// OpenID Connect Core §3.1.3.7 (item 6) allows in place of validating it.
enum IDToken {
  /// `jwt`'s payload claims; `.unreadable` when it is not three dot-separated parts whose second
  /// is base64url JSON.
  static func claims(of jwt: String) -> IDTokenClaims {
    let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let payload = base64URLDecode(parts[1]),
      let claims = JSONFields.parse(payload).map(IDTokenClaims.init)
    else { return .unreadable }
    return claims
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
}

/// The claims tokenbroker reads, from an ID token's payload or a userinfo answer (the same names:
/// OpenID Connect Core §2, §5.1; Microsoft `id-token-claims-reference`), as received: a claim that
/// is absent, null or not a string is nil. Its description shows no value (they name the user).
public struct IDTokenClaims: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
  /// False for an `id_token` that could not be read (then every claim is nil).
  var isReadable = true
  var preferredUsername, email, upn, oid, tid, sub: String?
  var iss, azp, nonce: String?
  /// `aud`: one string or an array of them.
  var aud: [String] = []
  /// `exp`, Unix seconds on the provider's clock.
  var exp: Int64?
  /// `iat`, Unix seconds on the provider's clock.
  var iat: Int64?

  static let unreadable = IDTokenClaims(isReadable: false)

  private init(isReadable: Bool) { self.isReadable = isReadable }

  /// Who the claims name, one rule for ID tokens and userinfo: the username is
  /// `preferred_username`, else `email`, else `upn`; with `oid`, `tid` and `sub`. Control
  /// characters are dropped and what is then empty counts as absent. Nil when nothing is left.
  var identity: Identity? {
    func text(_ value: String?) -> String? { value.map(IDToken.printable).flatMap { $0.isEmpty ? nil : $0 } }
    let id = Identity(
      username: text(preferredUsername) ?? text(email) ?? text(upn), objectID: text(oid), tenantID: text(tid),
      subject: text(sub))
    return id == Identity() ? nil : id
  }

  public var description: String { isReadable ? "IDTokenClaims(<redacted>)" : "IDTokenClaims(unreadable)" }
  public var customMirror: Mirror { Mirror(self, children: ["readable": isReadable]) }

  /// The claims of a JSON object (an ID token's payload, a userinfo answer).
  init(_ c: JSONFields) {
    preferredUsername = c.string("preferred_username")
    email = c.string("email")
    upn = c.string("upn")
    oid = c.string("oid")
    tid = c.string("tid")
    sub = c.string("sub")
    iss = c.string("iss")
    azp = c.string("azp")
    nonce = c.string("nonce")
    aud = c.string("aud").map { [$0] } ?? c.strings("aud") ?? []
    exp = c.int("exp").map(Int64.init)
    iat = c.int("iat").map(Int64.init)
  }
}

extension IDTokenClaims {
  /// The `aud` of an ID token (a JWT): one string or several; empty when it cannot be read. For
  /// exec's identity path, which serves an ID token only to an audience it was issued to.
  public static func audiences(of jwt: Secret) -> [String] { IDToken.claims(of: jwt.revealed).aud }
}
