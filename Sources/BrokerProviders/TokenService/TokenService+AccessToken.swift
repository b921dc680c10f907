import BrokerCore

extension TokenService {
  /// `token get` and git `get`: an access token for `scopes` (default: the account's) valid for at
  /// least max(`refresh-margin` capped at half the token's lifetime, `minValid`) seconds
  /// (`ExpiryPolicy`), from the cache or by a silent refresh; the first token of a scope set after
  /// a sign-in warns when it lives shorter than `refresh-margin`.
  ///
  /// A rotated refresh token is stored before the access token is cached or returned; a reply
  /// without one (or with `""`) keeps the stored token (bug-cases.md B08, B11). A token that expires within
  /// `minValid` even fresh from the provider is returned all the same (the provider sets its
  /// lifetime); one already expired never is (bug-cases.md B14).
  /// - Parameters:
  ///   - minValid: seconds the token must stay valid, or nil.
  ///   - forceRefresh: skip the cache.
  ///   - kind: `.idToken` (`kube-token = id`, `--format exec-credential`): the OpenID Connect ID
  ///     token cached with the access token, judged by its own `exp`, for `scopes` plus `openid`;
  ///     a refresh whose reply has none is `ProviderError.signInRequired` (after the rotated
  ///     refresh token is stored and the access token cached).
  /// - Throws: `ConfigError.unknownAccount`; `ProviderError.signInRequired` (not signed in, refresh
  ///   token rejected: then deleted if unchanged, with the account's access tokens; or an
  ///   interactive step needed), `.unavailable`, `.rejected`, `.unsupported`; `StoreError` (a
  ///   failure to store a rotated refresh token propagates).
  ///   - claims: a resource's claims challenge (JSON; interface.md §4 `wwwauth[]`, `token get
  ///     --claims`): the token is refreshed with them, never taken from the cache; a refusal is
  ///     `ProviderError.signInRequired`/`.stepUpRequired` (exit 3), the refresh token kept.
  public func accessToken(
    account name: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, kind: CredentialKind = .accessToken,
    claims: String? = nil
  ) async throws -> IssuedToken {
    try await accessTokenAndSource(
      account: name, scopes: scopes, minValid: minValid, forceRefresh: forceRefresh || claims != nil, kind: kind,
      claims: claims
    ).token
  }

  /// `accessToken(account:scopes:minValid:forceRefresh:)`, saying whether the token is the one the
  /// cache held when the call began (`fromCache`) rather than one just refreshed, here or by
  /// another process meanwhile: a retry after a refused cached token is worth it, after a fresh
  /// one not (the SharePoint cookie exchange).
  func accessTokenAndSource(
    account name: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, kind: CredentialKind = .accessToken,
    claims: String? = nil
  ) async throws -> (token: IssuedToken, fromCache: Bool) {
    let account = try config.requireAccount(name)
    if account.provider == .sharepoint {
      return try await sharePointBearer(account, minValid: minValid, forceRefresh: forceRefresh)
    }
    let requested = Self.requestedScopes(scopes, account: account, kind: kind)
    guard !requested.isEmpty else {
      throw ConfigError.accountKey(name, "scopes", "empty; list the scopes to request, or pass --scope")
    }
    // Each token's margin is capped at half its lifetime (ExpiryPolicy); an ID token is judged
    // by its own `exp` and lifetime, and a record without one does not serve it.
    let needed = { (r: AccessTokenRecord) in
      ExpiryPolicy.needed(
        refreshMargin: self.config.settings.refreshMargin, minValid: minValid, lifetime: r.credential(kind)?.lifetime)
    }
    // A token obtained later than now was fetched before the wall clock was stepped back: its
    // expiry is as far off as the step, so it counts as expired (MSAL's cache rule).
    let left = { (r: AccessTokenRecord) in
      (r.obtainedAt ?? 0) > self.time.now ? 0 : (r.credential(kind)?.expiresOn ?? 0) - self.time.now
    }
    let before = try await loadAccessRecord(name, requested)
    let what = "'\(name)' [\(requested.items.joined(separator: " "))]" + (kind == .idToken ? " (ID token)" : "")
    if !forceRefresh, let before, left(before) >= needed(before) {
      diagnostics.note("cache hit for \(what): \(left(before)) s left (\(needed(before)) s needed)")
      return (try await fromCache(before, account: account, requested: requested, kind: kind), true)
    }
    diagnostics.note(
      "refreshing \(what): "
        + (forceRefresh
          ? "--force-refresh"
          : before.map {
            $0.credential(kind) == nil
              ? "the cached access token came without an ID token" : "cached token has \(left($0)) s left, \(needed($0)) s needed"
          } ?? "no cached token"))

    let provider = try makeProvider(account)  // only now: a cached token needs no provider
    // A cached token still valid (for --min-valid when given) is handed out when the refresh fails
    // for any reason but a dead grant (interface.md §6); the refresh is then one short attempt.
    // Never for --force-refresh or a claims challenge: the caller refused that very token.
    let fallback = before.flatMap { r in
      !forceRefresh && claims == nil && r.credential(kind) != nil && left(r) >= max(1, Int64(minValid ?? 0)) ? r : nil
    }
    do {
      return (try await TokenEndpointClient.$shortAttempt.withValue(fallback != nil) {
        try await refresh()
      }, false)
    } catch where fallback != nil && Self.leavesCachedTokenUsable(error) {
      let why = (error as? ProviderError)?.description ?? String(describing: type(of: error))
      diagnostics.note(
        "the refresh of \(what) failed (\(why)); handing out the cached token, still valid for \(left(fallback!)) s")
      return (try await fromCache(fallback!, account: account, requested: requested, kind: kind), true)
    }

    func refresh() async throws -> IssuedToken {
      try honourHold(of: name)
      let waiting = Diagnostics.now
      return try await refreshLock.withLock(account: name) {
        diagnostics.note("took the refresh lock of '\(name)' after \(Diagnostics.milliseconds(since: waiting)) ms")
        // Another process may have refreshed while this one waited for the lock: its token is as
        // fresh as this refresh would make one (also for --force-refresh, whose own token it replaces).
        // A claims challenge needs a token asked for with those claims: never another one.
        if claims == nil, let stored = try await loadAccessRecord(name, requested), left(stored) >= needed(stored),
          !forceRefresh || stored.accessToken != before?.accessToken
        {
          diagnostics.note("another process refreshed \(what) meanwhile; using its token (\(left(stored)) s left)")
          return try await fromCache(stored, account: account, requested: requested, kind: kind)
        }
        // The holder before this one may have been throttled.
        try honourHold(of: name)
        let token: IssuedToken
        do {
          token = try await refreshLocked(
            provider, account: account, requested: requested, firstForScopes: before == nil, kind: kind, claims: claims)
        } catch ProviderError.throttled(let account, let host, let seconds, let reason) {
          diagnostics.note("holding back the refreshes of '\(name)' for \(seconds) s: \(host) is throttling (\(reason))")
          refreshLock.setHold(RefreshHold(until: time.now + Int64(seconds), host: host, reason: reason), account: name)
          throw ProviderError.throttled(account: account, host: host, seconds: seconds, reason: reason)
        }
        diagnostics.note("refreshed \(what): the new token is valid for \(token.expiresOn - time.now) s")
        return token
      }
    }
  }

  /// Whether a refresh that failed with `error` leaves a still-valid cached token fit to hand
  /// out (interface.md §6): every failure (the provider's, the network's, a refresh lock held too
  /// long elsewhere) but a dead or missing grant (`.signInRequired`: rejected, signed out, another
  /// sign-in meanwhile), a store that failed (its cause must be seen: a rotated refresh token may
  /// be at stake), a bad config and a cancelled call.
  static func leavesCachedTokenUsable(_ error: any Error) -> Bool {
    switch error {
    case ProviderError.signInRequired, is StoreError, is ConfigError, is CancellationError: return false
    default: return true
    }
  }

  /// Throws `ProviderError.throttled` while a throttling provider's hold on `account` is in force
  /// (interface.md §6): no caller sends a refresh before it ends, whatever its options.
  func honourHold(of account: String) throws(ProviderError) {
    guard let hold = refreshLock.hold(account: account, now: time.now) else { return }
    let seconds = Int(hold.until - time.now)
    diagnostics.note("not refreshing '\(account)': \(hold.host) asked to wait, \(seconds) s left")
    throw .throttled(account: account, host: hold.host, seconds: seconds, reason: hold.reason)
  }

  /// A cached access token, if the account is still signed in: an access token never outlives the
  /// sign-in (bug-cases.md B20): no refresh token, no cached token.
  private func fromCache(_ cached: AccessTokenRecord, account: AccountConfig, requested: ScopeSet, kind: CredentialKind)
    async throws -> IssuedToken
  {
    let name = account.name
    guard let record = try await loadRefreshRecord(name) else {
      diagnostics.note("dropping the cached access tokens of '\(name)': it is no longer signed in")
      try? await dropAccessTokens(account: name)
      throw signInNeeded(name)
    }
    warnIfSignInEndsSoon(record, account: account)
    let handed = cached.credential(kind) ?? (cached.accessToken, cached.expiresOn, cached.lifetime)
    return IssuedToken(
      account: name, provider: account.provider, tokenType: kind == .idToken ? "Bearer" : cached.tokenType,
      accessToken: handed.token, expiresOn: handed.expiresOn, scopes: requested.items, identity: record.identity,
      obtainedAt: cached.obtainedAt)
  }

  /// The scope set a call asks for: `scopes` (default: the account's), plus `openid` for an ID
  /// token (no OpenID Provider issues one without it).
  public static func requestedScopes(_ scopes: ScopeSet?, account: AccountConfig, kind: CredentialKind) -> ScopeSet {
    let requested = scopes.flatMap { $0.isEmpty ? nil : $0 } ?? ScopeSet(account.scopes)
    guard kind == .idToken, !requested.items.contains("openid") else { return requested }
    return ScopeSet(requested.items + ["openid"])
  }

  /// Re-reads the stored refresh token, refreshes and stores: under the account's refresh lock.
  /// - Parameter firstForScopes: no token was cached for `requested` (the first since the sign-in):
  ///   a short lifetime is warned about then.
  private func refreshLocked(
    _ provider: any OAuthProvider, account: AccountConfig, requested: ScopeSet, firstForScopes: Bool, kind: CredentialKind,
    claims: String? = nil
  ) async throws -> IssuedToken {
    let name = account.name
    var attempts = 0
    while true {
      attempts += 1
      guard let record = try await loadRefreshRecord(name) else { throw signInNeeded(name) }
      // Before the grant is spent: a rotated token the store cannot take would be lost.
      try await store.preflightWrite(for: .refreshToken(name))
      let (grant, used) = try await refreshHandlingRejection(
        provider, record, account: account, scopes: requested, claims: claims)
      do {
        let identity = try await storeRotated(grant, previous: used, account: account)
        // After the rotated token is stored (the server has already rotated: bug-cases-3.md X04), before any is handed out.
        try provider.checkRefreshed(grant, signedIn: used)
        let token = try await issue(grant, identity: identity, requested: requested, account: account)
        if firstForScopes { warnIfShortLived(token) }
        warnIfSignInEndsSoon(used, account: account)
        return kind == .idToken ? try idToken(of: grant, with: token, account: account) : token
      } catch is SignInChanged {
        // A new sign-in finished during the refresh: refresh again with its token, once.
        if attempts < 2 { continue }
        throw ProviderError.signInRequired(account: name, reason: "the sign-in changed while refreshing; try again")
      }
    }
  }

  private func issue(_ grant: TokenGrant, identity: String?, requested: ScopeSet, account: AccountConfig) async throws
    -> IssuedToken
  {
    let name = account.name
    guard grant.expiresOn > time.now else {
      throw ProviderError.unavailable(
        host: Providers.tokenHost(for: account),
        detail: "it returned an access token that has already expired; check the system clock and try again")
    }
    let token = IssuedToken(
      account: name, provider: account.provider, tokenType: grant.tokenType, accessToken: grant.accessToken,
      expiresOn: grant.expiresOn, scopes: requested.items, identity: identity, obtainedAt: grant.receivedAt ?? time.now)
    await cacheAccessToken(token, account, idToken: grant.keptIDToken)
    return token
  }

  /// The ID token of a refresh's `grant` as the credential handed out, `accessToken` its issued
  /// (and cached) access token.
  /// - Throws: `ProviderError.signInRequired` when the reply had no ID token, or one without a
  ///   readable `exp` (the rotated refresh token is stored by then: nothing is lost);
  ///   `.unavailable` for one already expired.
  private func idToken(of grant: TokenGrant, with accessToken: IssuedToken, account: AccountConfig) throws -> IssuedToken {
    let host = Providers.tokenHost(for: account)
    guard let kept = grant.keptIDToken else {
      diagnostics.note("the refresh reply for '\(account.name)' had no ID token with an exp; the refresh token is kept")
      throw ProviderError.signInRequired(
        account: account.name,
        reason: grant.idTokenValue == nil
          ? "\(host) returned no ID token on refresh; the cluster needs one (kube-token = id)"
          : "\(host) returned an ID token without an expiry (exp) on refresh; the cluster needs one (kube-token = id)")
    }
    guard kept.expiresOn > time.now else {
      throw ProviderError.unavailable(
        host: host, detail: "it returned an ID token that has already expired; check the system clock and try again")
    }
    var token = accessToken
    token.tokenType = "Bearer"
    token.accessToken = kept.value
    token.expiresOn = kept.expiresOn
    return token
  }

  /// Refreshes with `record`; on `invalid_grant` follows interface.md §6: reload the item; if it
  /// still holds the rejected token, record that the account needs signing in (interface.md
  /// §8.1), delete it and the account's access tokens; if another process
  /// stored a newer one meanwhile, try once more with that.
  /// - Returns: the grant and the record whose token earned it.
  func refreshHandlingRejection(
    _ provider: any OAuthProvider, _ record: RefreshTokenRecord, account: AccountConfig, scopes: ScopeSet,
    claims: String? = nil
  ) async throws -> (TokenGrant, RefreshTokenRecord) {
    var current = record
    var triesLeft = 2
    while true {
      triesLeft -= 1
      do {
        let grant =
          claims == nil
          ? try await provider.refresh(current.refreshToken, scopes: scopes, clientID: current.clientID)
          : try await provider.refresh(current.refreshToken, scopes: scopes, clientID: current.clientID, claims: claims)
        return (grant, current)
      } catch let rejected as RefreshTokenRejected {
        guard let stored = try await loadRefreshRecord(account.name) else { throw rejected.providerError }
        if stored.refreshToken == current.refreshToken {
          let limit = timeLimitReason(current, account: account)
          recordSignInNeeded(
            account: account.name, reason: limit == nil ? .rejected : .expired, detail: limit ?? rejected.reason,
            identity: current.identity)
          diagnostics.note(
            "deleting the refresh token of '\(account.name)' and its cached access tokens: the provider rejected that very token")
          try await store.delete(.refreshToken(account.name))
          do {
            try await dropAccessTokens(account: account.name)
          } catch {
            warn("could not drop the cached access tokens of '\(account.name)' (\(error))")
          }
          if let limit { throw ProviderError.signInRequired(account: account.name, reason: limit) }
          throw rejected.providerError
        }
        guard triesLeft > 0 else { throw rejected.providerError }
        diagnostics.note("the provider rejected a refresh token that another process had already replaced; using the newer one")
        current = stored
      }
    }
  }

  /// Stores a rotated refresh token (keeping identity and tenant); nothing when the grant has none.
  /// - Returns: the identity to report.
  /// - Throws: `StoreError`: the new token must be stored before any access token is handed out.
  ///   `ProviderError.signInRequired` when the account was signed out while the refresh ran;
  ///   `SignInChanged` when another sign-in replaced the refresh token meanwhile (bug-cases.md
  ///   bug-cases.md B20: the old sign-in is never written back and its access token never handed out).
  func storeRotated(_ grant: TokenGrant, previous: RefreshTokenRecord, account: AccountConfig) async throws -> String? {
    let identity = previous.identity ?? grant.identity?.display
    guard let stored = try await loadRefreshRecord(account.name) else { throw signInNeeded(account.name) }
    if stored.refreshToken != previous.refreshToken {
      if stored.identity != previous.identity || stored.objectID != previous.objectID || stored.clientID != previous.clientID {
        throw SignInChanged()
      }
      diagnostics.note("another process stored a newer refresh token of '\(account.name)' meanwhile; keeping it")
      return identity  // the same sign-in, rotated by another process meanwhile: keep its newer token
    }
    if grant.refreshTokenWasEmpty {
      warn("the provider sent an empty refresh_token for '\(account.name)'; keeping the stored one")
    }
    guard let newToken = grant.refreshToken, newToken != previous.refreshToken else {
      diagnostics.note("the provider did not rotate the refresh token of '\(account.name)'; keeping it")
      return identity
    }
    diagnostics.note("storing the rotated refresh token of '\(account.name)'")
    var record = previous.rotated(to: newToken, now: time.now)
    record.identity = identity
    record.tenant = previous.tenant ?? grant.identity?.tenantID
    record.objectID = previous.objectID ?? grant.identity?.objectID
    record.expiresOn = grant.refreshTokenExpiresOn  // what the provider says of the new token
    try await saveRotated(record, account: account)
    return identity
  }

  /// Writes a rotated refresh token. The rule: the provider has already replaced the token it
  /// came from (with strict rotation the old one is dead), so the new one is never thrown away.
  /// The refresh checked the store first (`preflightWrite`); a write that fails all the same is
  /// made again, `rotatedWriteAttempts` times in all within the store's bound
  /// (`rotatedWriteSeconds`, interface.md §7), and then fails with
  /// `StoreError.rotatedNotStored` (exit 5, saying the account will need `tokenbroker login` if
  /// the token cannot be written). Inside the agent the store (`AgentStore`) keeps a token it
  /// could not write in memory, serves refreshes from it and writes it at its next use.
  /// - Throws: `StoreError.rotatedNotStored`; what the store throws that is not a `StoreError`.
  func saveRotated(_ record: RefreshTokenRecord, account: AccountConfig) async throws {
    let key = ItemKey.refreshToken(account.name)
    let started = time.now
    var attempt = 1
    while true {
      do {
        return try await store.save(key, label: label(key, account), secret: record.encoded())
      } catch let error as StoreError {
        guard attempt < Self.rotatedWriteAttempts, time.now - started < Self.rotatedWriteSeconds else {
          throw StoreError.rotatedNotStored(account: account.name, cause: error.description)
        }
        diagnostics.note("could not store the rotated refresh token of '\(account.name)' (\(error)); trying again")
        attempt += 1
        try await time.sleep(seconds: 0.5)
      }
    }
  }

  /// How many times, and for how many seconds at most, a rotated refresh token is written.
  static let rotatedWriteAttempts = 3
  static let rotatedWriteSeconds: Int64 = 10
}

/// A refresh finished after another sign-in had replaced the refresh token it redeemed.
struct SignInChanged: Error {}
