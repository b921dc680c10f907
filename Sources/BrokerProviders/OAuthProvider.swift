import BrokerCore

/// One identity provider's flows for one account. Implementations are pure logic over
/// `HTTPTransport` and `TimeSource`; they never touch the store (that is `TokenService`'s job).
///
/// Scope sets passed in are the *requested* ones; a provider adds what it needs on the wire
/// (Azure: `offline_access`, and `openid profile` at sign-in; Google: `access_type=offline`).
public protocol OAuthProvider: Sendable {
  /// Starts the device authorization grant (RFC 8628 §3.1–3.2).
  /// - Throws: `ProviderError.rejected` (bad client or scopes), `.unavailable` (network, 5xx after
  ///   retries, a reply that is not the expected JSON).
  func startDeviceAuthorization(scopes: ScopeSet) async throws -> DeviceAuthorization

  /// As `startDeviceAuthorization(scopes:)`, sending back a claims challenge (a step-up a refresh
  /// asked for) where the provider takes one (Entra: `claims`); the default ignores it.
  func startDeviceAuthorization(scopes: ScopeSet, claims: String?) async throws -> DeviceAuthorization

  /// Polls until approved, declined, expired, or `timeout` seconds pass (RFC 8628 §3.4–3.5).
  ///
  /// Waits `interval` seconds between polls (through `TimeSource.sleep`), 5 s more after each
  /// `slow_down` (or the server's larger `interval`); transient failures never shorten the gap and
  /// do not end the loop before the deadline: min(`issuedAt + expiresIn`, now + `timeout`).
  /// - Throws: `ProviderError.declined`, `.deviceCodeExpired`, `.loginTimedOut`, `.rejected`;
  ///   `CancellationError` when the task is cancelled.
  func pollDeviceAuthorization(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int) async throws
    -> TokenGrant

  /// Redeems a refresh token for an access token for `scopes` (RFC 6749 §6), as the client that
  /// obtained it (a refresh token must be redeemed by its own client; nil: the account's
  /// `client-id`).
  /// - Throws: `RefreshTokenRejected` when the refresh token itself is dead (`invalid_grant`);
  ///   `ProviderError.signInRequired` when an interactive step is needed for this resource (the
  ///   refresh token stays good); `.unavailable` after retries; `.rejected` for config problems.
  func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?) async throws -> TokenGrant

  /// As `refresh(_:scopes:clientID:)`, asking for the token with `claims` (a resource's claims
  /// challenge, RFC 6750 §3 `insufficient_claims`: a JSON object, OpenID Connect Core §5.5) where
  /// the provider takes them (Entra: `claims` on the token request); the default ignores them.
  func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?, claims: String?) async throws -> TokenGrant

  /// Holds a refresh reply's ID token, when it has one, to the sign-in that `signedIn` records
  /// (OpenID Connect Core §12.2). Called after the rotated refresh token is stored and before the
  /// access token is handed out. Default: nothing to check.
  /// - Throws: `ProviderError.signInRequired` (another user), `.rejected` (a claim the reply may
  ///   not carry); never for a reply without `id_token`.
  func checkRefreshed(_ grant: TokenGrant, signedIn: RefreshTokenRecord) throws(ProviderError)

  /// Where the loopback redirect of a browser sign-in points.
  var loopbackHost: LoopbackHost { get }

  /// The authorization request of a browser sign-in (RFC 6749 §4.1.1, RFC 7636 §4.3). No default:
  /// a default `async` one would silently win over a provider's synchronous implementation.
  /// - Throws: `ProviderError.unsupported` when the provider has no browser sign-in.
  func browserAuthorization(_ request: BrowserSignInRequest) async throws -> BrowserAuthorization

  /// Redeems the code the redirect brought (RFC 6749 §4.1.3, RFC 7636 §4.5).
  /// - Throws: `ProviderError.loginFailed` (code refused: PKCE mismatch, used, expired),
  ///   `.rejected` (client or redirect URI not accepted), `.unavailable`.
  func redeem(code: Secret, for authorization: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant

  /// What an error on the redirect means (RFC 6749 §4.1.2.1): `access_denied` is `.declined`,
  /// `temporarily_unavailable`/`server_error` `.unavailable`, interaction errors `.loginFailed`,
  /// the rest `.rejected` with what to check.
  func authorizationError(_ info: AuthorizationErrorInfo, account: String) -> ProviderError

  /// Revokes the grant behind `refreshToken` at the provider (RFC 7009 §2).
  /// - Returns: `.noEndpoint` for providers without revocation (Azure).
  /// - Throws: `ProviderError.unavailable` (network, 5xx after retries, a reply that is not the
  ///   provider's), `.rejected` (the provider refused the request).
  func revoke(_ refreshToken: Secret, clientID: String?) async throws -> RevocationOutcome

  /// `host[:port]` of the revocation endpoint as configured, for messages; nil without one.
  var revocationHost: String? { get }
}

/// What a revocation did (RFC 7009 §2.2).
public enum RevocationOutcome: Sendable, Equatable {
  /// The provider revoked the grant.
  case revoked
  /// The provider no longer knew the token (already revoked or expired): nothing left to revoke.
  case alreadyInvalid
  /// The provider has no revocation endpoint.
  case noEndpoint
}

extension OAuthProvider {
  /// Claims are not sent: the provider takes none.
  public func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?, claims: String?) async throws
    -> TokenGrant
  {
    try await refresh(refreshToken, scopes: scopes, clientID: clientID)
  }
}

extension OAuthProvider {
  public func startDeviceAuthorization(scopes: ScopeSet, claims: String?) async throws -> DeviceAuthorization {
    try await startDeviceAuthorization(scopes: scopes)
  }

  /// `refresh(_:scopes:clientID:)` as the account's own `client-id`.
  public func refresh(_ refreshToken: Secret, scopes: ScopeSet) async throws -> TokenGrant {
    try await refresh(refreshToken, scopes: scopes, clientID: nil)
  }

  public func checkRefreshed(_ grant: TokenGrant, signedIn: RefreshTokenRecord) throws(ProviderError) {}

  public var loopbackHost: LoopbackHost { .ipv4 }

  public func authorizationError(_ info: AuthorizationErrorInfo, account: String) -> ProviderError {
    AuthorizationErrors.classify(info, account: account, host: "the authorization endpoint", hint: nil)
  }

  public func revoke(_ refreshToken: Secret, clientID: String?) async throws -> RevocationOutcome { .noEndpoint }

  public var revocationHost: String? { nil }
}

/// Builds the provider for an account.
public enum Providers {
  /// - Throws: `ProviderError.unsupported` for providers not implemented yet (sharepoint);
  ///   `ConfigError.invalid` when a required key is missing.
  /// - Parameter discoveryCache: where `oidc` accounts keep discovery documents.
  public static func make(
    for account: AccountConfig, settings: BrokerSettings, transport: any HTTPTransport, time: any TimeSource,
    discoveryCache: any DiscoveryCache = MemoryDiscoveryCache.shared
  ) throws -> any OAuthProvider {
    switch account.provider {
    case .azure:
      return try AzureProvider(account: account, settings: settings, transport: transport, time: time)
    case .google:
      return try GoogleProvider(account: account, settings: settings, transport: transport, time: time)
    case .oidc:
      return try OIDCProvider(
        account: account, settings: settings, transport: transport, time: time, discoveryCache: discoveryCache)
    case .github:
      return try GitHubProvider(account: account, settings: settings, transport: transport, time: time)
    case .sharepoint:
      throw ProviderError.unsupported(
        "sharepoint accounts ('\(account.name)') are not implemented yet; for a bearer token use "
          + "'tokenbroker token get \(account.via ?? "VIA") --scope \(account.site ?? "SITE")/.default'")
    }
  }

  /// Where the account's loopback redirect points (the CLI binds the listener before the
  /// provider builds the request).
  public static func loopbackHost(for account: AccountConfig) -> LoopbackHost {
    account.provider == .azure ? .localhost : .ipv4  // oidc: 127.0.0.1 (RFC 8252 §8.3)
  }

  /// The host of the account's token endpoint, for messages.
  static func tokenHost(for account: AccountConfig) -> String {
    switch account.provider {
    case .azure: return EndpointURL(AzureEndpoints(account: account).token)?.authority ?? account.authority
    case .google: return EndpointURL(GoogleEndpoints(account: account).token)?.authority ?? "google"
    case .sharepoint: return EndpointURL(account.site ?? "")?.authority ?? "sharepoint"
    case .oidc: return EndpointURL(account.endpoints.token ?? account.issuer ?? "")?.authority ?? "the issuer"
    case .github: return EndpointURL(GitHubEndpoints(account: account).token)?.authority ?? account.authority
    }
  }
}
