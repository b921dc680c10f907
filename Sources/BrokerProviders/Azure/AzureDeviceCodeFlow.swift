import BrokerCore

/// The device authorization grant against Entra ID (protocols.md §2.5, RFC 8628).
struct AzureDeviceCodeFlow: Sendable {
  let provider: AzureProvider

  /// - Throws: `ProviderError.rejected` (client, tenant or scopes wrong), `.unavailable`.
  func start(scopes: ScopeSet) async throws -> DeviceAuthorization {
    let url = provider.endpoints.deviceAuthorization
    let fields = [("client_id", provider.clientID), ("scope", AzureScopes.wire(scopes, signIn: true))]
    switch try await provider.client.post(url: url, fields: fields, secrets: []) {
    case .success(let body):
      return try DeviceAuthorizationReply.parse(body, now: provider.time.now, host: TokenEndpointClient.host(of: url))
    case .error(let reply):
      throw AzureErrors.requestError(reply, account: provider.account.name, host: TokenEndpointClient.host(of: url))
    }
  }

  /// One attempt per poll: the polling loop is the retry (transient failures wait and go on).
  /// - Throws: see `OAuthProvider.pollDeviceAuthorization`.
  func poll(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int) async throws -> TokenGrant {
    let provider = self.provider
    let account = provider.account.name
    let host = provider.tokenHost
    let fields = [
      ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", provider.clientID),
      ("device_code", authorization.deviceCode.revealed),
    ]
    let secrets = [authorization.deviceCode.revealed]
    let polling = DeviceCodePolling(account: account, time: provider.time)
    return try await polling.run(authorization, timeout: timeout, host: host) {
      switch try await provider.client.exchange(url: provider.endpoints.token, fields: fields, secrets: secrets) {
      case .reply(.success(let body)):
        return .granted(try TokenReply.grant(from: body, requested: scopes, now: provider.time.now, host: host))
      case .reply(.error(let reply)):
        if let outcome = try DeviceCodePolling.outcome(for: reply, account: account) { return outcome }
        throw AzureErrors.requestError(reply, account: account, host: host)
      case .transient(let what, let remedy, let retryAfter):
        return .transient(what: what, remedy: remedy, retryAfter: retryAfter)
      case .failed(let error):
        throw error
      }
    }
  }
}
