import BrokerCore

/// The authorization code grant at an OpenID Provider (RFC 6749 §4.1, RFC 7636 S256, RFC 8252
/// loopback redirect, OpenID Connect Core §3.1.2.1 `nonce`, RFC 9207 `iss`).
struct OIDCAuthCodeFlow: Sendable {
  let provider: OIDCProvider

  /// The authorization URL with `response_type=code`, the scopes, `state`, a fresh `nonce`, the
  /// S256 challenge and `login_hint` when given.
  /// - Throws: `ProviderError.unsupported` when the server has no authorization endpoint;
  ///   discovery errors.
  func authorization(_ request: BrowserSignInRequest) async throws -> BrowserAuthorization {
    let metadata = try await provider.discovery.metadata()
    guard let endpoint = metadata.authorizationEndpoint else {
      throw ProviderError.unsupported(
        "\(provider.issuerHost) has no authorization endpoint; use 'tokenbroker login \(provider.account.name) --device-code'")
    }
    let nonce = RandomValue.base64URL(octets: 32)
    var authorization = BrowserAuthorization.codeRequest(
      request, endpoint: endpoint, clientID: provider.clientID, loopbackHost: provider.loopbackHost,
      scope: OIDCScopes.wire(request.scopes, provider.account, metadata),
      extra: [("nonce", nonce), ("claims", request.claims)])
    authorization.nonce = nonce
    return authorization
  }

  /// Checks the redirect's `iss` (RFC 9207 §2.4), redeems the code, and checks the ID token with
  /// the `nonce` sent.
  /// - Throws: `ProviderError.loginFailed` (another issuer answered, `iss` missing where promised,
  ///   code refused, ID token refused), `.rejected`, `.unavailable`.
  func redeem(code: Secret, for authorization: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant {
    let metadata = try await provider.discovery.metadata()
    let account = provider.account.name
    if let iss = authorization.responseIssuer {
      guard iss == provider.issuer else {
        throw ProviderError.loginFailed(
          account: account,
          reason: "the authorization response names another issuer ('\(IDToken.printable(iss))'); the code was not redeemed")
      }
    } else if metadata.issParameterSupported {
      throw ProviderError.loginFailed(
        account: account, reason: "the authorization response carried no iss although \(provider.issuerHost) sends one (RFC 9207)")
    }
    let (fields, secrets) = authorization.redemption(code: code)
    let host = TokenEndpointClient.host(of: metadata.tokenEndpoint)
    let grant = try await provider.client.grant(
      url: metadata.tokenEndpoint, fields: fields,
      client: provider.authentication(for: authorization.clientID, methods: metadata.tokenEndpointAuthMethods),
      secrets: secrets, requested: scopes,
      redeemsCode: true
    ) { reply in
      AuthorizationErrors.refusedCode(reply, account: account, reason: nil)
        ?? OIDCErrors.signInError(reply, account: account, host: host)
    }
    return try await provider.withIdentity(
      grant, metadata: metadata, clientID: authorization.clientID, nonce: authorization.nonce)
  }
}
