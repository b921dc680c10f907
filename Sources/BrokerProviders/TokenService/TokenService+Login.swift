import BrokerCore

extension TokenService {
  /// `login --device-code` (interface.md §3): runs the device flow for `scopes` (nil: the account's;
  /// with `claims`, a step-up's challenge, on the device authorization request),
  /// shows the code through `prompt`, stores the refresh token, drops the account's cached access
  /// tokens (bug-cases.md B20), then caches the new access token (a failure there is only a warning).
  /// - Parameter prompt: called once with the code to show; strip control characters before printing.
  /// - Returns: the new access token, with the identity that signed in.
  /// - Throws: `ConfigError`; `ProviderError.declined`, `.deviceCodeExpired`, `.loginTimedOut`
  ///   (after `login-timeout` seconds), `.rejected` (also when no refresh token came back),
  ///   `.unavailable`, `.unsupported`; `StoreError`.
  public func loginWithDeviceCode(
    account name: String, scopes asked: ScopeSet? = nil, claims: String? = nil,
    prompt: @escaping @Sendable (DeviceAuthorization) -> Void
  ) async throws -> IssuedToken {
    let account = try config.requireAccount(name)
    let provider = try makeProvider(account)
    let scopes = asked ?? ScopeSet(account.scopes)
    let authorization = try await provider.startDeviceAuthorization(scopes: scopes, claims: claims)
    prompt(authorization)
    let grant = try await provider.pollDeviceAuthorization(
      authorization, scopes: scopes, timeout: config.settings.loginTimeout)
    return try await storeSignIn(grant, account: account, scopes: scopes, clientID: authorization.clientID ?? account.clientID)
  }

  /// The claims challenge a refresh for `scopes` is answered with now, for `login --scope` to send
  /// on its authorization request; nil when the refresh needs no step-up or
  /// fails otherwise (the sign-in that follows replaces the refresh token either way). A refresh
  /// that works is stored and cached as by `token get`.
  public func stepUpClaims(account name: String, scopes: ScopeSet) async -> String? {
    do {
      _ = try await accessToken(account: name, scopes: scopes, minValid: nil, forceRefresh: true)
    } catch ProviderError.stepUpRequired(_, _, _, let claims) {
      return claims
    } catch {}
    return nil
  }

  /// Stores the refresh token of a completed sign-in with who signed in and the client that
  /// obtained it, drops the account's cached access tokens (bug-cases.md B20) and caches the new one.
  ///
  /// A sign-in without a refresh token in the reply (Google sends one only with consent, which
  /// is asked for on the first sign-in only) keeps `previous` when it belongs to the same identity
  /// and client: the grant is the same (bug-cases.md B11's rule, at sign-in).
  /// - Throws: `ProviderError.rejected` when there is no refresh token to keep; for an oidc
  ///   account `.loginFailed` (exit 6) naming the issuer and what to change (bug-cases-3.md X03:
  ///   a sign-in that stores nothing refreshable must not look like one that worked);
  ///   `StoreError`.
  func storeSignIn(
    _ grant: TokenGrant, account: AccountConfig, scopes: ScopeSet, clientID: String?,
    previous: RefreshTokenRecord? = nil
  ) async throws -> IssuedToken {
    let name = account.name
    var kept: Secret?
    if grant.refreshToken == nil, let previous, let who = grant.identity?.display, previous.identity == who,
      (previous.clientID ?? account.clientID) == clientID
    {
      kept = previous.refreshToken
    }
    guard let refreshToken = grant.refreshToken ?? kept else {
      if account.provider == .oidc {
        throw ProviderError.loginFailed(account: name, reason: Self.noRefreshTokenReason(account, scopes: scopes))
      }
      if account.provider == .github {
        // A token without a refresh token lasts until revoked (an OAuth app's, or a GitHub App's
        // with expiring user tokens off): not kept yet.
        throw ProviderError.loginFailed(
          account: name,
          reason: "\(Providers.tokenHost(for: account)) issued a token that does not expire, which tokenbroker does not keep yet; "
            + "use a GitHub App with 'Expire user authorization tokens' on")
      }
      let hint =
        account.provider == .google
        ? "run 'tokenbroker logout \(name)', then 'tokenbroker login \(name)' (Google sends one only with consent, asked for on a first sign-in)"
        : "check that the app registration may use offline_access"
      throw ProviderError.rejected(
        account: name, error: "no_refresh_token", detail: "the sign-in worked but no refresh token came back; \(hint)")
    }
    let identity = grant.identity
    // The sign-in's record comes after the one stored now (DocumentAge), also one that a refresh
    // rotated within the same second: counted from 0, it would lose to it, and the store would
    // keep the old grant beside the new one and hand out the old.
    let stored = (try? await loadRefreshRecord(name)) ?? nil
    let record = RefreshTokenRecord(
      refreshToken: refreshToken, identity: identity?.display, tenant: identity?.tenantID,
      objectID: identity?.objectID, obtainedAt: max(time.now, stored?.obtainedAt ?? .min), clientID: clientID,
      subject: identity?.subject, nonce: grant.idToken?.nonce, rotations: stored.map { $0.rotations + 1 } ?? 0,
      expiresOn: grant.refreshTokenExpiresOn ?? (kept == nil ? nil : previous?.expiresOn))
    let key = ItemKey.refreshToken(name)
    try await store.save(key, label: label(key, account), secret: record.encoded())
    accountStates.record(.signedIn, account: name)
    warnIfSignInIsShort(record, account: account)
    refreshLock.setHold(nil, account: name)  // a new sign-in starts without an old throttle's hold
    try await dropAccessTokens(account: name)
    let token = IssuedToken(
      account: name, provider: account.provider, tokenType: grant.tokenType, accessToken: grant.accessToken,
      expiresOn: grant.expiresOn, scopes: scopes.items, identity: identity?.display, obtainedAt: grant.receivedAt ?? time.now)
    if grant.expiresOn > time.now {
      warnIfShortLived(token)
      await cacheAccessToken(token, account, idToken: grant.keptIDToken)
    }
    return token
  }

  /// Why an oidc sign-in without a refresh token failed, and what to change: Okta, Dex and Auth0
  /// issue one only for `offline_access` (and Okta only with the Refresh Token grant allowed,
  /// Auth0 with "Allow Offline Access"; bug-cases-3.md X03).
  static func noRefreshTokenReason(_ account: AccountConfig, scopes: ScopeSet) -> String {
    let host = Providers.tokenHost(for: account)
    let products = "Okta: also allow the Refresh Token grant; Auth0: Allow Offline Access"
    guard scopes.items.contains("offline_access") else {
      return "\(host) issued no refresh token; add offline_access to scopes (\(products))"
    }
    return "\(host) issued no refresh token although offline_access was asked for; "
      + "allow client-id \(account.clientID ?? "") to hold refresh tokens there (\(products))"
  }
}
