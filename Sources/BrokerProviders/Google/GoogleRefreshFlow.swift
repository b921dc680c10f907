import BrokerCore

/// Redeeming a refresh token at Google (protocols.md §3.3): with the client (and its secret) that
/// obtained it; the reply normally has no `refresh_token`, and `TokenService` then keeps the
/// stored one (bug-cases.md B11).
struct GoogleRefreshFlow: Sendable {
  let provider: GoogleProvider

  /// Sends `scope` only when `scopes` differ from the account's (a narrower token); otherwise
  /// Google grants the scopes of the sign-in.
  /// - Parameter clientID: the client that obtained the token; nil: `client-id`.
  /// - Throws: `RefreshTokenRejected` (`invalid_grant`), `ProviderError.signInRequired`
  ///   (`invalid_rapt`: reauthentication, the token stays), `.unavailable`, `.rejected`.
  func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?) async throws -> TokenGrant {
    var fields = [("grant_type", "refresh_token"), ("refresh_token", refreshToken.revealed)]
    if scopes != ScopeSet(provider.account.scopes) { fields.append(("scope", scopes.items.joined(separator: " "))) }
    let account = provider.account.name
    let host = provider.tokenHost
    return try await provider.client.grant(
      url: provider.endpoints.token, fields: fields, client: provider.tokenAuthentication(for: clientID ?? provider.clientID),
      secrets: [refreshToken.revealed], requested: scopes
    ) { GoogleErrors.refreshError($0, account: account, host: host) }
  }
}
