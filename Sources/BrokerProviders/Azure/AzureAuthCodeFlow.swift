import BrokerCore

/// The authorization code grant with PKCE against Entra ID as a public client (protocols.md §2.2,
/// §2.3, §2.9; RFC 6749 §4.1, RFC 7636, RFC 8252): no client secret, redirect
/// `http://localhost:PORT/`.
struct AzureAuthCodeFlow: Sendable {
  let provider: AzureProvider

  /// The `/authorize` URL: `response_type=code`, `response_mode=query`, the sign-in scopes
  /// (resources, then `openid profile offline_access`), `state`, `code_challenge` (S256) and
  /// `login_hint` and `claims` when given.
  func authorization(_ request: BrowserSignInRequest) -> BrowserAuthorization {
    BrowserAuthorization.codeRequest(
      request, endpoint: provider.endpoints.authorization, clientID: provider.clientID,
      loopbackHost: provider.loopbackHost, scope: AzureScopes.wire(request.scopes, signIn: true),
      extra: [("response_mode", "query"), ("claims", request.claims)])
  }

  /// Redeems `code` with the PKCE verifier at `/token` (transient failures are retried like every
  /// token request; a retry after a lost reply may find the code used, which ends in exit 6).
  /// - Throws: `ProviderError.loginFailed` for `invalid_grant` (AADSTS501481 verifier mismatch,
  ///   54005 code already redeemed, 70008 expired), else as `AzureErrors.requestError`.
  func redeem(code: Secret, for authorization: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant {
    let (fields, secrets) = authorization.redemption(code: code)
    let host = provider.tokenHost
    let account = provider.account.name
    return try await provider.client.grant(
      url: provider.endpoints.token, fields: [("scope", AzureScopes.wire(scopes, signIn: true))] + fields,
      client: .publicClient(authorization.clientID), secrets: secrets, requested: scopes,
      redeemsCode: true
    ) { reply in
      AuthorizationErrors.refusedCode(reply, account: account, reason: Self.reason(reply.numericCodes))
        ?? AzureErrors.requestError(reply, account: account, host: host)
    }
  }

  /// What the AADSTS codes of a refused code redemption mean (protocols.md §2.3).
  static func reason(_ codes: [Int]) -> String? {
    if codes.contains(501481) { return "the PKCE code verifier did not match the challenge" }
    if codes.contains(54005) { return "the authorization code was already redeemed" }
    if codes.contains(70008) { return "the authorization code expired" }
    if codes.contains(50011) || codes.contains(500112) { return "the redirect URI did not match" }
    return nil
  }
}
