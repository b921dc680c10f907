import BrokerCore

/// Google's limited-input device flow (protocols.md §3.4, RFC 8628) with the device client
/// (`device-client-id`/`-secret`, else `client-id`/`-secret`): the reply says
/// `verification_url`, and polls need the client secret, unless `device-client-secret` is empty
/// (a public device client).
struct GoogleDeviceCodeFlow: Sendable {
  let provider: GoogleProvider

  /// `POST device/code` with `client_id` and `scope` (and the client's authentication when
  /// `client-auth` is set).
  /// - Throws: `ProviderError.rejected` (client type, scopes not allowed in the device flow),
  ///   `.unavailable`.
  func start(scopes: ScopeSet) async throws -> DeviceAuthorization {
    let url = provider.endpoints.deviceAuthorization
    let id = provider.deviceClient.id
    let account = provider.account.name
    let host = TokenEndpointClient.host(of: url)
    return try await provider.client.deviceAuthorization(
      url: url, fields: [("scope", GoogleScopes.wire(scopes, signIn: true))],
      client: provider.documentedAuthentication(for: id) ?? .publicClient(id)
    ) { GoogleErrors.requestError($0, account: account, host: host, deviceFlow: true) }
  }

  /// Polls the token endpoint; the identity comes from the ID token, else userinfo.
  /// - Throws: see `OAuthProvider.pollDeviceAuthorization`.
  func poll(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int) async throws -> TokenGrant {
    let account = provider.account.name
    let host = provider.tokenHost
    let grant = try await provider.client.pollDeviceGrant(
      authorization, url: provider.endpoints.token,
      client: provider.tokenAuthentication(for: authorization.clientID ?? provider.deviceClient.id),
      requested: scopes, timeout: timeout
    ) { GoogleErrors.requestError($0, account: account, host: host, deviceFlow: true) }
    return await UserInfo(client: provider.client, url: provider.endpoints.userinfo).withIdentity(grant)
  }
}
