import BrokerCore
import FoundationEssentials

/// How one client authenticates at an endpoint that takes client authentication: the token
/// endpoint (RFC 6749 §2.3.1, §3.2.1), the device authorization endpoint (RFC 8628 §3.1) and the
/// revocation endpoint (RFC 7009 §2.1). The one mechanism every provider uses.
struct ClientAuthentication: Sendable, Equatable {
  /// `client_id`.
  var clientID: String
  /// The client secret; nil or empty for a public client.
  var secret: Secret?
  /// How the secret travels; `.none` for a public client whatever is asked.
  var method: ClientAuthMethod

  /// - Parameter method: the configured `client-auth`, else `fallback`; a client without a secret
  ///   is always `.none`.
  init(clientID: String, secret: Secret?, method: ClientAuthMethod?, fallback: ClientAuthMethod = .clientSecretBasic) {
    self.clientID = clientID
    let secret = secret.flatMap { $0.isEmpty ? nil : $0 }
    self.secret = secret
    self.method = secret == nil ? .none : (method ?? fallback)
  }

  /// A public client: `client_id` in the body only.
  static func publicClient(_ clientID: String) -> ClientAuthentication {
    ClientAuthentication(clientID: clientID, secret: nil, method: ClientAuthMethod.none)
  }

  /// No client authentication and no `client_id` at all (Google's revocation request).
  static let unauthenticated = ClientAuthentication(clientID: "", secret: nil, method: ClientAuthMethod.none)

  /// `fields` with what this method adds to the body (`client_id`; with `client_secret_post`
  /// also `client_secret`), and the `Authorization` header of `client_secret_basic`.
  func apply(to fields: [(String, String)]) -> (fields: [(String, String)], headers: [HTTPHeader]) {
    switch (method, secret) {
    case (.clientSecretBasic, let secret?):
      return (fields, [HTTPHeader("Authorization", "Basic " + Self.basicCredentials(id: clientID, secret: secret))])
    case (.clientSecretPost, let secret?):
      return ([("client_id", clientID), ("client_secret", secret.revealed)] + fields, [])
    default:
      return (clientID.isEmpty ? fields : [("client_id", clientID)] + fields, [])
    }
  }

  /// Values to redact from anything shown: the secret, and the Basic credentials built from it.
  var secrets: [String] {
    guard let secret else { return [] }
    return [secret.revealed, Self.basicCredentials(id: clientID, secret: secret)]
  }

  /// RFC 6749 §2.3.1: id and secret each form-encoded (Appendix B), joined by `:`, then base64.
  static func basicCredentials(id: String, secret: Secret) -> String {
    let pair = FormEncoding.escape(id) + ":" + FormEncoding.escape(secret.revealed)
    return Data(pair.utf8).base64EncodedString()
  }
}
