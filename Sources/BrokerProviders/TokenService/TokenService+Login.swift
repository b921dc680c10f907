import BrokerCore

extension TokenService {
  /// `login --device-code` (interface.md §3): runs the device flow for the account's scopes, shows
  /// the code through `prompt`, stores the refresh token, drops the account's cached access tokens
  /// (B20), then caches the new access token (a failure there is only a warning).
  /// - Parameter prompt: called once with the code to show; strip control characters before printing.
  /// - Returns: the new access token, with the identity that signed in.
  /// - Throws: `ConfigError`; `ProviderError.declined`, `.deviceCodeExpired`, `.loginTimedOut`
  ///   (after `login-timeout` seconds), `.rejected` (also when no refresh token came back),
  ///   `.unavailable`, `.unsupported`; `StoreError`.
  public func loginWithDeviceCode(account name: String, prompt: @escaping @Sendable (DeviceAuthorization) -> Void)
    async throws -> IssuedToken
  {
    let account = try config.requireAccount(name)
    let provider = try makeProvider(account)
    let scopes = ScopeSet(account.scopes)
    let authorization = try await provider.startDeviceAuthorization(scopes: scopes)
    prompt(authorization)
    let grant = try await provider.pollDeviceAuthorization(
      authorization, scopes: scopes, timeout: config.settings.loginTimeout)
    guard let refreshToken = grant.refreshToken else {
      throw ProviderError.rejected(
        account: name, error: "no_refresh_token",
        detail: "the sign-in worked but no refresh token came back; check that the app registration may use offline_access")
    }
    let identity = grant.identity
    let record = RefreshTokenRecord(
      refreshToken: refreshToken, identity: identity?.display, tenant: identity?.tenantID,
      objectID: identity?.objectID, obtainedAt: time.now)
    let key = ItemKey.refreshToken(name)
    try await store.save(key, label: label(key, account), secret: record.encoded())
    try await dropAccessTokens(account: name)
    let token = IssuedToken(
      account: name, provider: account.provider, tokenType: grant.tokenType, accessToken: grant.accessToken,
      expiresOn: grant.expiresOn, scopes: scopes.items, identity: identity?.display)
    if grant.expiresOn > time.now { await cacheAccessToken(token, account) }
    return token
  }
}
