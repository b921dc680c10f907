import BrokerCore

/// The authorization code grant with PKCE and a client secret for a Google "Desktop app" client
/// (protocols.md §3.2; RFC 6749 §4.1, RFC 7636, RFC 8252): redirect `http://127.0.0.1:PORT/`.
struct GoogleAuthCodeFlow: Sendable {
  let provider: GoogleProvider

  /// The authorization URL: `access_type=offline` always, `prompt=consent` on the first sign-in
  /// (Google issues a refresh token only with consent), `state`, S256 challenge, `login_hint`.
  func authorization(_ request: BrowserSignInRequest) -> BrowserAuthorization {
    BrowserAuthorization.codeRequest(
      request, endpoint: provider.endpoints.authorization, clientID: provider.clientID,
      loopbackHost: provider.loopbackHost, scope: GoogleScopes.wire(request.scopes, signIn: true),
      extra: [("access_type", "offline"), ("prompt", request.firstSignIn ? "consent" : nil)])
  }

  /// Redeems `code` with the verifier and the client secret (protocols.md §3.2); the identity
  /// comes from the ID token, else the userinfo endpoint.
  /// - Throws: `ProviderError.loginFailed` for `invalid_grant` (code refused, PKCE mismatch),
  ///   else as `GoogleErrors.requestError`.
  func redeem(code: Secret, for authorization: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant {
    let (fields, secrets) = authorization.redemption(code: code)
    let host = provider.tokenHost
    let account = provider.account.name
    let grant = try await provider.client.grant(
      url: provider.endpoints.token, fields: fields, client: provider.tokenAuthentication(for: authorization.clientID),
      secrets: secrets, requested: scopes,
      redeemsCode: true
    ) { reply in
      AuthorizationErrors.refusedCode(reply, account: account, reason: nil)
        ?? GoogleErrors.requestError(reply, account: account, host: host)
    }
    return await UserInfo(client: provider.client, url: provider.endpoints.userinfo).withIdentity(grant)
  }
}
