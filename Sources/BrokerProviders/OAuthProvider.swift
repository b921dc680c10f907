import BrokerCore

/// One identity provider's flows for one account. Implementations are pure logic over
/// `HTTPTransport` and `TimeSource`; they never touch the store (that is `TokenService`'s job).
///
/// Scope sets passed in are the *requested* ones; a provider adds what it needs on the wire
/// (Azure: `offline_access`, and `openid profile` at sign-in).
public protocol OAuthProvider: Sendable {
  /// Starts the device authorization grant (RFC 8628 §3.1–3.2).
  /// - Throws: `ProviderError.rejected` (bad client or scopes), `.unavailable` (network, 5xx after
  ///   retries, a reply that is not the expected JSON).
  func startDeviceAuthorization(scopes: ScopeSet) async throws -> DeviceAuthorization

  /// Polls until approved, declined, expired, or `timeout` seconds pass (RFC 8628 §3.4–3.5).
  ///
  /// Waits `interval` seconds between polls (through `TimeSource.sleep`), 5 s more after each
  /// `slow_down` (or the server's larger `interval`); transient failures never shorten the gap and
  /// do not end the loop before the deadline: min(`issuedAt + expiresIn`, now + `timeout`).
  /// - Throws: `ProviderError.declined`, `.deviceCodeExpired`, `.loginTimedOut`, `.rejected`;
  ///   `CancellationError` when the task is cancelled.
  func pollDeviceAuthorization(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int) async throws
    -> TokenGrant

  /// Redeems a refresh token for an access token for `scopes` (RFC 6749 §6).
  /// - Throws: `RefreshTokenRejected` when the refresh token itself is dead (`invalid_grant`);
  ///   `ProviderError.signInRequired` when an interactive step is needed for this resource (the
  ///   refresh token stays good); `.unavailable` after retries; `.rejected` for config problems.
  func refresh(_ refreshToken: Secret, scopes: ScopeSet) async throws -> TokenGrant
}

/// Builds the provider for an account.
public enum Providers {
  /// - Throws: `ProviderError.unsupported` for providers not implemented yet (google, sharepoint);
  ///   `ConfigError.invalid` when a required key is missing.
  public static func make(
    for account: AccountConfig, settings: BrokerSettings, transport: any HTTPTransport, time: any TimeSource
  ) throws -> any OAuthProvider {
    switch account.provider {
    case .azure:
      return try AzureProvider(account: account, settings: settings, transport: transport, time: time)
    case .google:
      throw ProviderError.unsupported(
        "google accounts ('\(account.name)') are not implemented yet; use an azure account for now")
    case .sharepoint:
      throw ProviderError.unsupported(
        "sharepoint accounts ('\(account.name)') are not implemented yet; for a bearer token use "
          + "'tokenbroker token get \(account.via ?? "VIA") --scope \(account.site ?? "SITE")/.default'")
    }
  }

  /// The host of the account's token endpoint, for messages.
  static func tokenHost(for account: AccountConfig) -> String {
    switch account.provider {
    case .azure: return EndpointURL(AzureEndpoints(account: account).token)?.authority ?? account.authority
    case .google: return EndpointURL(account.endpoints.token ?? "https://oauth2.googleapis.com/token")?.authority ?? "google"
    case .sharepoint: return EndpointURL(account.site ?? "")?.authority ?? "sharepoint"
    }
  }
}
