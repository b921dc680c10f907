import BrokerCore

/// Turns an OAuth error reply into the provider's error (its codes, its hints).
typealias OAuthErrorClassifier = @Sendable (OAuthErrorReply) -> any Error

/// The requests of RFC 6749 §4.1.3 and §6, RFC 8628 §3.1–3.5 and RFC 7009 §2, written once:
/// every provider calls these with its endpoints, its client authentication and its error
/// classification.
extension TokenEndpointClient {
  /// POSTs a token request (code redemption, refresh) and reads the token reply (§5.1).
  /// - Parameters:
  ///   - fields: the grant's fields, without client authentication.
  ///   - requested: the scopes asked for (the grant's scopes when the reply names none).
  ///   - onError: classifies an OAuth error reply.
  ///   - redeemsCode: an authorization code redemption, which the user cannot repeat without a
  ///     new sign-in: a 429 gets one more try after the server's wait (at most `maxRetryAfter`
  ///     seconds), and an `invalid_grant` after that try is the code used up meanwhile
  ///     (bug-cases-3.md X07 step 5).
  /// - Throws: `ProviderError.clientRejected` for `invalid_client` (with `onError`'s hint), else
  ///   what `onError` returns; `ProviderError.unavailable` (after retries, or a reply that is not a
  ///   token reply), `.throttled` (429), `.loginFailed` (the code used up after a 429),
  ///   `.refusedWithoutReason`.
  func grant(
    url: String, fields: [(String, String)], client: ClientAuthentication, secrets: [String], requested: ScopeSet,
    redeemsCode: Bool = false, onError: OAuthErrorClassifier
  ) async throws -> TokenGrant {
    var waitedForThrottle = false
    while true {
      let reply: EndpointReply
      // `expires_in` counts from when the server answered, which is after the request left:
      // counting from the request errs early, never late (an access token never outlives what
      // we say of it, bug-cases-3.md X12).
      let sent = time.now
      do {
        reply = try await post(url: url, fields: fields, client: client, secrets: secrets)
      } catch ProviderError.throttled(_, _, let seconds, _)
        where redeemsCode && !waitedForThrottle && Double(seconds) <= maxRetryAfter
      {
        waitedForThrottle = true
        try await time.sleep(seconds: Double(seconds))
        continue
      }
      switch reply {
      case .success(let body):
        return try TokenReply.grant(from: body, requested: requested, now: sent, host: Self.host(of: url))
      case .error(let reply):
        if waitedForThrottle && reply.error == "invalid_grant" {
          throw ProviderError.loginFailed(
            account: account, reason: "the sign-in code was used up while \(Self.host(of: url)) was throttling")
        }
        let error = onError(reply)
        guard reply.error == "invalid_client" else { throw error }
        // A client problem, never a dead grant: nothing may be deleted for it (bug-cases-3.md X05).
        let detail: String
        if case .rejected(_, _, let hint) = error as? ProviderError { detail = hint } else { detail = reply.summary }
        throw ProviderError.clientRejected(
          account: account, host: Self.host(of: url), clientID: client.clientID, method: client.method.rawValue, detail: detail)
      }
    }
  }

  /// Starts the device authorization grant (RFC 8628 §3.1–3.2); the reply's `clientID` is
  /// `client`'s.
  /// - Parameter fields: `scope` and any provider extras, without client authentication.
  /// - Throws: what `onError` returns; `ProviderError.unavailable`, `.refusedWithoutReason`.
  func deviceAuthorization(
    url: String, fields: [(String, String)], client: ClientAuthentication, onError: OAuthErrorClassifier
  ) async throws -> DeviceAuthorization {
    switch try await post(url: url, fields: fields, client: client, secrets: []) {
    case .success(let body):
      var authorization = try DeviceAuthorizationReply.parse(body, now: time.now, host: Self.host(of: url))
      authorization.clientID = client.clientID
      return authorization
    case .error(let reply):
      throw onError(reply)
    }
  }

  /// Polls the token endpoint with the device code (RFC 8628 §3.4–3.5) until a grant, a terminal
  /// answer or the deadline; one attempt per poll (the polling loop is the retry).
  /// - Parameter refusal: the provider's reading of an error reply before RFC 8628's (Entra sends
  ///   a policy that blocks the flow as `access_denied` or `invalid_grant` with its code); nil: none.
  /// - Throws: see `OAuthProvider.pollDeviceAuthorization`; other error replies as `onError`.
  func pollDeviceGrant(
    _ authorization: DeviceAuthorization, url: String, client: ClientAuthentication, requested: ScopeSet,
    timeout: Int, refusal: @escaping @Sendable (OAuthErrorReply) -> ProviderError? = { _ in nil },
    onError: @escaping OAuthErrorClassifier
  ) async throws -> TokenGrant {
    let fields = [
      ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", authorization.deviceCode.revealed),
    ]
    let secrets = [authorization.deviceCode.revealed]
    let host = Self.host(of: url)
    let account = self.account
    let polling = DeviceCodePolling(account: account, time: time)
    return try await polling.run(authorization, timeout: timeout, host: host, endpoint: url) {
      let sent = time.now  // as in `grant`: lifetimes count from the request
      switch try await exchange(url: url, fields: fields, client: client, secrets: secrets) {
      case .reply(.success(let body)):
        return .granted(try TokenReply.grant(from: body, requested: requested, now: sent, host: host))
      case .reply(.error(let reply)):
        if let refused = refusal(reply) { throw refused }
        if let outcome = try DeviceCodePolling.outcome(for: reply, account: account) { return outcome }
        throw onError(reply)
      case .transient(let what, let remedy, let retryAfter):
        return .transient(what: what, remedy: remedy, retryAfter: retryAfter)
      case .stray(let status, let error):
        return .stray(status: status, error: error)
      case .throttled(_, let seconds):
        return .slowDown(serverInterval: nil, retryAfter: seconds)
      case .failed(let error):
        throw error
      }
    }
  }

  /// Revokes `token` (RFC 7009 §2.1): a `POST` of the token in the form body (never the URL
  /// query, which proxies and logs keep).
  /// - Parameters:
  ///   - hint: `token_type_hint` (`refresh_token`), or nil to send none.
  ///   - client: the client's authentication, or nil to send none at all (Google documents
  ///     `token` alone).
  /// - Returns: `.revoked` (2xx), or `.alreadyInvalid` when the server no longer knows the token
  ///   (`invalid_token`, `invalid_grant`: revoked or expired already).
  /// - Throws: `ProviderError.unavailable` (network, 5xx after retries, `temporarily_unavailable`,
  ///   a reply that is not OAuth), `.rejected` (any other refusal, `unsupported_token_type`
  ///   included: the grant remains), `.refusedWithoutReason`.
  func revoke(url: String, token: Secret, hint: String?, client: ClientAuthentication?) async throws -> RevocationOutcome {
    var fields = [("token", token.revealed)]
    if let hint { fields.append(("token_type_hint", hint)) }
    let auth = client ?? ClientAuthentication.unauthenticated
    switch try await post(url: url, fields: fields, client: auth, secrets: [token.revealed], expectsJSON: false) {
    case .success:
      return .revoked
    case .error(let reply):
      if ["invalid_token", "invalid_grant"].contains(reply.error) { return .alreadyInvalid }
      if reply.error == "temporarily_unavailable" || reply.error == "server_error" {
        throw ProviderError.unavailable(host: Self.host(of: url), detail: "\(reply.summary); try again later")
      }
      throw ProviderError.rejected(
        account: account, error: reply.error,
        detail: "\(Self.host(of: url)) refused the revocation (\(reply.summary)); check revocation-endpoint and client-auth")
    }
  }
}
