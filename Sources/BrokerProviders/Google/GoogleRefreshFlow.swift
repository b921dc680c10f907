import BrokerCore

/// Redeeming a refresh token at Google (protocols.md §3.3): with the client (and its secret) that
/// obtained it; the reply normally has no `refresh_token`, and `TokenService` then keeps the
/// stored one (B11).
struct GoogleRefreshFlow: Sendable {
  let provider: GoogleProvider

  /// Sends `scope` only when `scopes` differ from the account's (a narrower token); otherwise
  /// Google grants the scopes of the sign-in.
  /// - Parameter clientID: the client that obtained the token; nil: `client-id`.
  /// - Throws: `RefreshTokenRejected` (`invalid_grant`), `ProviderError.signInRequired`
  ///   (`invalid_rapt`: reauthentication, the token stays), `.unavailable`, `.rejected`.
  func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?) async throws -> TokenGrant {
    let id = clientID ?? provider.clientID
    let secret = provider.secret(for: id)
    var fields = [
      ("client_id", id), ("client_secret", secret.revealed), ("grant_type", "refresh_token"),
      ("refresh_token", refreshToken.revealed),
    ]
    if scopes != ScopeSet(provider.account.scopes) { fields.append(("scope", scopes.items.joined(separator: " "))) }
    let host = provider.tokenHost
    let secrets = [refreshToken.revealed, secret.revealed]
    switch try await provider.client.post(url: provider.endpoints.token, fields: fields, secrets: secrets) {
    case .success(let body):
      return try TokenReply.grant(from: body, requested: scopes, now: provider.time.now, host: host)
    case .error(let reply):
      throw GoogleErrors.refreshError(reply, account: provider.account.name, host: host)
    }
  }
}
