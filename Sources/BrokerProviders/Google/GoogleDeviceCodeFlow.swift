import BrokerCore

/// Google's limited-input device flow (protocols.md §3.4, RFC 8628) with the device client
/// (`device-client-id`/`-secret`, else `client-id`/`-secret`): the reply says
/// `verification_url`, and polls need the client secret.
struct GoogleDeviceCodeFlow: Sendable {
  let provider: GoogleProvider

  /// `POST device/code` with `client_id` and `scope`.
  /// - Throws: `ProviderError.rejected` (client type, scopes not allowed in the device flow),
  ///   `.unavailable`.
  func start(scopes: ScopeSet) async throws -> DeviceAuthorization {
    let url = provider.endpoints.deviceAuthorization
    let client = provider.deviceClient
    let fields = [("client_id", client.id), ("scope", GoogleScopes.wire(scopes, signIn: true))]
    let host = TokenEndpointClient.host(of: url)
    switch try await provider.client.post(url: url, fields: fields, secrets: []) {
    case .success(let body):
      var authorization = try DeviceAuthorizationReply.parse(body, now: provider.time.now, host: host)
      authorization.clientID = client.id
      return authorization
    case .error(let reply):
      throw GoogleErrors.requestError(reply, account: provider.account.name, host: host, deviceFlow: true)
    }
  }

  /// Polls the token endpoint (one attempt per poll: the polling loop is the retry).
  /// - Throws: see `OAuthProvider.pollDeviceAuthorization`.
  func poll(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int) async throws -> TokenGrant {
    let provider = self.provider
    let account = provider.account.name
    let host = provider.tokenHost
    let clientID = authorization.clientID ?? provider.deviceClient.id
    let secret = provider.secret(for: clientID)
    let fields = [
      ("client_id", clientID), ("client_secret", secret.revealed), ("device_code", authorization.deviceCode.revealed),
      ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
    ]
    let secrets = [authorization.deviceCode.revealed, secret.revealed]
    let polling = DeviceCodePolling(account: account, time: provider.time)
    let grant = try await polling.run(authorization, timeout: timeout, host: host) {
      switch try await provider.client.exchange(url: provider.endpoints.token, fields: fields, secrets: secrets) {
      case .reply(.success(let body)):
        return .granted(try TokenReply.grant(from: body, requested: scopes, now: provider.time.now, host: host))
      case .reply(.error(let reply)):
        if let outcome = try DeviceCodePolling.outcome(for: reply, account: account) { return outcome }
        throw GoogleErrors.requestError(reply, account: account, host: host, deviceFlow: true)
      case .transient(let what, let remedy, let retryAfter):
        return .transient(what: what, remedy: remedy, retryAfter: retryAfter)
      case .failed(let error):
        throw error
      }
    }
    return await GoogleUserInfo(provider: provider).withIdentity(grant)
  }
}
