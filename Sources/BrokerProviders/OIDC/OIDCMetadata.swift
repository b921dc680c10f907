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
    guard let b = JSONFields.parse(body), let issuer = b.string("issuer"),
      let token = overrides.token ?? b.nonEmptyString("token_endpoint")
    else { return nil }
    return OIDCMetadata(
      issuer: issuer, authorizationEndpoint: overrides.authorization ?? b.nonEmptyString("authorization_endpoint"),
      tokenEndpoint: token,
      deviceAuthorizationEndpoint: overrides.deviceAuthorization ?? b.nonEmptyString("device_authorization_endpoint"),
      revocationEndpoint: overrides.revocation ?? b.nonEmptyString("revocation_endpoint"),
      userinfoEndpoint: overrides.userinfo ?? b.nonEmptyString("userinfo_endpoint"),
      tokenEndpointAuthMethods: b.strings("token_endpoint_auth_methods_supported"),
      revocationEndpointAuthMethods: b.strings("revocation_endpoint_auth_methods_supported"),
      scopesSupported: b.strings("scopes_supported"),
      issParameterSupported: b.bool("authorization_response_iss_parameter_supported") ?? false)
  }

  /// interface.md §2.1: with a secret, `client_secret_basic` unless `methods` lists
  /// `client_secret_post` and not Basic.
  static func authMethod(_ methods: [String]?) -> ClientAuthMethod {
    guard let methods, methods.contains("client_secret_post"), !methods.contains("client_secret_basic") else {
      return .clientSecretBasic
    }
    return .clientSecretPost
  }
}
