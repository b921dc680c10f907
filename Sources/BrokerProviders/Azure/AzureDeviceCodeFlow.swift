import BrokerCore

/// The device authorization grant against Entra ID (protocols.md §2.5, RFC 8628) as a public
/// client.
struct AzureDeviceCodeFlow: Sendable {
  let provider: AzureProvider

  /// - Parameter claims: a claims challenge to send back (`claims`), or nil.
  /// - Throws: `ProviderError.rejected` (client, tenant or scopes wrong), `.unavailable`.
  func start(scopes: ScopeSet, claims: String?) async throws -> DeviceAuthorization {
    let url = provider.endpoints.deviceAuthorization
    let account = provider.account.name
    let host = TokenEndpointClient.host(of: url)
    var fields = [("scope", AzureScopes.wire(scopes, signIn: true))]
    if let claims { fields.append(("claims", claims)) }
    return try await provider.client.deviceAuthorization(
      url: url, fields: fields, client: .publicClient(provider.clientID)
    ) { AzureErrors.requestError($0, account: account, host: host) }
  }

  /// - Throws: see `OAuthProvider.pollDeviceAuthorization`.
  func poll(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int) async throws -> TokenGrant {
    let account = provider.account.name
    let host = provider.tokenHost
    return try await provider.client.pollDeviceGrant(
      authorization, url: provider.endpoints.token, client: .publicClient(authorization.clientID ?? provider.clientID),
      requested: scopes, timeout: timeout,
      refusal: { [redirectPort = provider.account.redirectPort] in
        AzureErrors.deviceCodeRefusal($0, account: account, redirectPort: redirectPort)
      }
    ) { AzureErrors.requestError($0, account: account, host: host) }
  }
}
