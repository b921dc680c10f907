import BrokerCore
import FoundationEssentials

/// A Proof Key for Code Exchange pair (RFC 7636), method `S256`.
///
/// The verifier is 32 random octets, base64url-encoded (43 characters of `[A-Za-z0-9-_]`, RFC 7636
/// §4.1); the challenge is `BASE64URL(SHA256(ASCII(verifier)))` without padding (§4.2). The
/// verifier is secret until the code is redeemed: it goes only into the token request's body.
public struct PKCE: Sendable {
  /// SHA-256 of a byte string (BrokerStore's `SHA256.digest`, GLib's GChecksum): BrokerProviders
  /// links no crypto library of its own.
  public typealias Digest = @Sendable ([UInt8]) -> [UInt8]

  /// `code_challenge_method`.
  public static let method = "S256"
  /// `code_verifier` (RFC 7636 §4.1).
  public let verifier: Secret
  /// `code_challenge` (RFC 7636 §4.2).
  public let challenge: String

  /// The pair for a given verifier (RFC 7636 Appendix B checks this).
  public init(verifier: Secret, sha256: Digest) {
    self.verifier = verifier
    challenge = Base64URL.encode(sha256(Array(verifier.revealed.utf8)))
  }

  /// A fresh pair from 32 octets of the system's random source (`getrandom`).
  public static func random(sha256: Digest) -> PKCE {
    PKCE(verifier: Secret(RandomValue.base64URL(octets: 32)), sha256: sha256)
  }
}

/// base64url without padding (RFC 4648 §5, RFC 7636 Appendix A).
enum Base64URL {
  static func encode(_ bytes: [UInt8]) -> String {
    var s = Data(bytes).base64EncodedString()
    s = s.replacing("+", with: "-").replacing("/", with: "_")
    while s.hasSuffix("=") { s.removeLast() }
    return s
  }
}

/// Unguessable values: `state`, PKCE verifiers.
public enum RandomValue {
  /// `octets` random bytes from `SystemRandomNumberGenerator` (getrandom(2) on Linux), base64url.
  public static func base64URL(octets: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return Base64URL.encode((0..<octets).map { _ in UInt8.random(in: 0...255, using: &generator) })
  }
}
