import BrokerCore

/// Redeeming a refresh token at Entra ID (protocols.md §2.4; RFC 6749 §6).
struct AzureRefreshFlow: Sendable {
  let provider: AzureProvider

  /// - Throws: `RefreshTokenRejected` (`invalid_grant`: the token is dead),
  ///   `ProviderError.stepUpRequired` (an interactive step is needed; the token stays good),
  ///   `.unavailable` (after retries, or a malformed reply), `.rejected` (config problems).
  /// - Parameter clientID: the client that obtained the token; nil: the account's `client-id`.
  /// - Parameter claims: a claims challenge (JSON) to send as `claims`, or nil.
  func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?, claims: String?) async throws -> TokenGrant {
    var fields = [
      ("grant_type", "refresh_token"), ("refresh_token", refreshToken.revealed),
      ("scope", AzureScopes.wire(scopes, signIn: false)),
    ]
    if let claims { fields.append(("claims", claims)) }
    let account = provider.account.name
    let host = provider.tokenHost
    return try await provider.client.grant(
      url: provider.endpoints.token, fields: fields, client: .publicClient(clientID ?? provider.clientID),
      secrets: [refreshToken.revealed], requested: scopes
    ) { AzureErrors.refreshError($0, account: account, host: host, scopes: scopes) }
  }
}
