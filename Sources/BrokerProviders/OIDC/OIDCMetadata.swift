import BrokerCore
import FoundationEssentials

/// The fields of a discovery document the broker reads (OpenID Connect Discovery §3, RFC 8414 §2,
/// RFC 8628 §4, RFC 9207 §3; protocols-2.md §1.2), with the account's endpoint keys applied.
struct OIDCMetadata: Sendable, Equatable {
  var issuer: String
  var authorizationEndpoint: String?
  var tokenEndpoint: String
  var deviceAuthorizationEndpoint: String?
  var revocationEndpoint: String?
  var userinfoEndpoint: String?
  /// nil when absent: RFC 8414 §2's default is `client_secret_basic`.
  var tokenEndpointAuthMethods: [String]?
  var revocationEndpointAuthMethods: [String]?
  /// nil when absent (unknown).
  var scopesSupported: [String]?
  /// RFC 9207 §3: the server adds `iss` to every authorization response.
  var issParameterSupported: Bool

  /// Parses a document; nil when it is not a JSON object with string `issuer` and `token_endpoint`
  /// (the token endpoint may come from `token-endpoint` instead: `overrides`).
  static func parse(_ body: [UInt8], overrides: EndpointOverrides) -> OIDCMetadata? {
    guard let b = JSONText.decode(Body.self, bytes: body), let issuer = b.issuer,
      let token = overrides.token ?? b.tokenEndpoint
    else { return nil }
    return OIDCMetadata(
      issuer: issuer, authorizationEndpoint: overrides.authorization ?? b.authorizationEndpoint, tokenEndpoint: token,
      deviceAuthorizationEndpoint: overrides.deviceAuthorization ?? b.deviceAuthorizationEndpoint,
      revocationEndpoint: overrides.revocation ?? b.revocationEndpoint,
      userinfoEndpoint: overrides.userinfo ?? b.userinfoEndpoint, tokenEndpointAuthMethods: b.tokenAuthMethods,
      revocationEndpointAuthMethods: b.revocationAuthMethods, scopesSupported: b.scopesSupported,
      issParameterSupported: b.issParameter ?? false)
  }

  /// interface.md §2.1: with a secret, `client_secret_basic` unless `methods` lists
  /// `client_secret_post` and not Basic.
  static func authMethod(_ methods: [String]?) -> ClientAuthMethod {
    guard let methods, methods.contains("client_secret_post"), !methods.contains("client_secret_basic") else {
      return .clientSecretBasic
    }
    return .clientSecretPost
  }

  private struct Body: Decodable {
    var issuer, authorizationEndpoint, tokenEndpoint, deviceAuthorizationEndpoint: String?
    var revocationEndpoint, userinfoEndpoint: String?
    var tokenAuthMethods, revocationAuthMethods, scopesSupported: [String]?
    var issParameter: Bool?

    enum CodingKeys: String, CodingKey {
      case issuer
      case authorizationEndpoint = "authorization_endpoint"
      case tokenEndpoint = "token_endpoint"
      case deviceAuthorizationEndpoint = "device_authorization_endpoint"
      case revocationEndpoint = "revocation_endpoint"
      case userinfoEndpoint = "userinfo_endpoint"
      case tokenAuthMethods = "token_endpoint_auth_methods_supported"
      case revocationAuthMethods = "revocation_endpoint_auth_methods_supported"
      case scopesSupported = "scopes_supported"
      case issParameter = "authorization_response_iss_parameter_supported"
    }

    init(from decoder: any Decoder) throws {
      let c = try decoder.container(keyedBy: CodingKeys.self)
      func url(_ k: CodingKeys) -> String? { c.lenientString(k).flatMap { $0.isEmpty ? nil : $0 } }
      func list(_ k: CodingKeys) -> [String]? { (try? c.decodeIfPresent([String].self, forKey: k)) ?? nil }
      issuer = c.lenientString(.issuer)
      authorizationEndpoint = url(.authorizationEndpoint)
      tokenEndpoint = url(.tokenEndpoint)
      deviceAuthorizationEndpoint = url(.deviceAuthorizationEndpoint)
      revocationEndpoint = url(.revocationEndpoint)
      userinfoEndpoint = url(.userinfoEndpoint)
      tokenAuthMethods = list(.tokenAuthMethods)
      revocationAuthMethods = list(.revocationAuthMethods)
      scopesSupported = list(.scopesSupported)
      issParameter = (try? c.decodeIfPresent(Bool.self, forKey: .issParameter)) ?? nil
    }
  }
}
