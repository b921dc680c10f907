import BrokerCore

/// Redeeming a refresh token at Entra ID (protocols.md §2.4; RFC 6749 §6).
struct AzureRefreshFlow: Sendable {
  let provider: AzureProvider

  /// - Throws: `RefreshTokenRejected` (`invalid_grant`: the token is dead),
  ///   `ProviderError.signInRequired` (an interactive step is needed; the token stays good),
  ///   `.unavailable` (after retries, or a malformed reply), `.rejected` (config problems).
  /// - Parameter clientID: the client that obtained the token; nil: the account's `client-id`.
  func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?) async throws -> TokenGrant {
    let fields = [
      ("client_id", clientID ?? provider.clientID), ("grant_type", "refresh_token"), ("refresh_token", refreshToken.revealed),
      ("scope", AzureScopes.wire(scopes, signIn: false)),
    ]
    let host = provider.tokenHost
    switch try await provider.client.post(url: provider.endpoints.token, fields: fields, secrets: [refreshToken.revealed]) {
    case .success(let body):
      return try TokenReply.grant(from: body, requested: scopes, now: provider.time.now, host: host)
    case .error(let reply):
      throw AzureErrors.refreshError(reply, account: provider.account.name, host: host)
    }
  }
}
