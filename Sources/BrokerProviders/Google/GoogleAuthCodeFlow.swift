import BrokerCore

/// The authorization code grant with PKCE and a client secret for a Google "Desktop app" client
/// (protocols.md §3.2; RFC 6749 §4.1, RFC 7636, RFC 8252): redirect `http://127.0.0.1:PORT/`.
struct GoogleAuthCodeFlow: Sendable {
  let provider: GoogleProvider

  /// The authorization URL: `access_type=offline` always, `prompt=consent` on the first sign-in
  /// (Google issues a refresh token only with consent), `state`, S256 challenge, `login_hint`.
  func authorization(_ request: BrowserSignInRequest) -> BrowserAuthorization {
    let redirectURI = provider.loopbackHost.redirectURI(port: request.port)
    let url = BrowserAuthorization.url(
      provider.endpoints.authorization,
      [
        ("client_id", provider.clientID), ("redirect_uri", redirectURI), ("response_type", "code"),
        ("scope", GoogleScopes.wire(request.scopes, signIn: true)), ("state", request.state),
        ("code_challenge", request.pkce.challenge), ("code_challenge_method", PKCE.method),
        ("access_type", "offline"), ("prompt", request.firstSignIn ? "consent" : nil),
        ("login_hint", request.loginHint),
      ])
    return BrowserAuthorization(
      url: url, redirectURI: redirectURI, state: request.state, clientID: provider.clientID, pkce: request.pkce)
  }

  /// Redeems `code` with the verifier and the client secret (protocols.md §3.2); the identity
  /// comes from the ID token, else the userinfo endpoint.
  /// - Throws: `ProviderError.loginFailed` for `invalid_grant` (code refused, PKCE mismatch),
  ///   else as `GoogleErrors.requestError`.
  func redeem(code: Secret, for authorization: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant {
    let fields = [
      ("code", code.revealed), ("redirect_uri", authorization.redirectURI), ("grant_type", "authorization_code"),
      ("code_verifier", authorization.pkce.verifier.revealed),
    ]
    let host = provider.tokenHost
    let account = provider.account.name
    let grant = try await provider.client.grant(
      url: provider.endpoints.token, fields: fields, client: provider.tokenAuthentication(for: authorization.clientID),
      secrets: [code.revealed, authorization.pkce.verifier.revealed], requested: scopes,
      redeemsCode: true
    ) { reply in
      AuthorizationErrors.refusedCode(reply, account: account, reason: nil)
        ?? GoogleErrors.requestError(reply, account: account, host: host)
    }
    return await UserInfo(client: provider.client, url: provider.endpoints.userinfo).withIdentity(grant)
  }
}
