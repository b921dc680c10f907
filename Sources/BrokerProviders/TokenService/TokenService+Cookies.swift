import BrokerCore

extension TokenService {
  /// `token get` of a SharePoint `cookie` or `imported-cookies` account (interface.md §3).
  ///
  /// `cookie`: the cached `SPOIDCRL` while younger than `cookie-lifetime` (and more than
  /// `refresh-margin` s before its own expiry); otherwise, or with `forceRefresh`, a new one from
  /// `POST SITE/_api/SP.OAuth.NativeClient/Authenticate` with a bearer token of the `via` account.
  /// `imported-cookies`: the stored cookies until their expiry, with a warning when less than a
  /// day is left; never renewed (bug-cases.md B28).
  /// - Throws: `ConfigError.invalid` (bad `site`/`via`); `ProviderError.signInRequired` (not
  ///   signed in, `via` signed out, imported cookies expired), `.rejected`, `.unavailable`,
  ///   `.unsupported` (bearer accounts); `HTTPError`; `StoreError`.
  public func cookies(account name: String, forceRefresh: Bool) async throws -> IssuedCookies {
    let account = try config.requireAccount(name)
    let site = try SharePointSite(account: account)
    switch (account.provider, account.mode) {
    case (.sharepoint, .cookie): return try await exchangedCookies(account, site: site, forceRefresh: forceRefresh)
    case (.sharepoint, .importedCookies): return try await importedCookies(account, site: site)
    default:
      throw ProviderError.unsupported(
        "'\(name)' hands out bearer tokens, not cookies; use --format token, header, json, env or exec-credential")
    }
  }

  private func exchangedCookies(_ account: AccountConfig, site: SharePointSite, forceRefresh: Bool) async throws -> IssuedCookies {
    let via = try viaAccount(of: account)
    // Cookies never outlive the sign-in they came from (bug-cases.md B20).
    guard try await loadRefreshRecord(via.name) != nil else {
      try? await store.delete(ItemKey(account: account.name, kind: .cookies))
      throw signInNeeded(via.name)
    }
    if !forceRefresh, let record = try await loadCookieRecord(account.name), time.now < record.expiresOn {
      return IssuedCookies(account: account.name, site: site.origin, cookies: record.cookies, expiresOn: record.expiresOn)
    }
    guard let transport else { throw ProviderError.unsupported("no HTTP transport to reach \(site.origin)") }
    let exchange = SharePointCookieExchange(site: site, transport: transport, caFiles: config.settings.caFiles(account, via), account: account.name)
    let (cookies, now) = try await exchangeWithFreshBearer(exchange, via: via, forceRefresh: forceRefresh)
    var renewAt = now + Int64(account.cookieLifetime)
    for c in cookies where c.expires > 0 { renewAt = min(renewAt, c.expires - Int64(config.settings.refreshMargin)) }
    let record = CookieRecord(cookies: cookies, obtainedAt: now, expiresOn: max(renewAt, now + 1))
    await saveCookieRecord(record, account)
    return IssuedCookies(account: account.name, site: site.origin, cookies: cookies, expiresOn: record.expiresOn)
  }

  /// The cookie exchange with the `via` account's token for the site: `forceRefresh` renews that
  /// token too (the whole chain). When the site answers 401 to a cached token (it may refuse one
  /// before its local expiry), that token is dropped and the exchange retried once with a freshly
  /// refreshed one; a second 401 is reported, and nothing else is deleted.
  /// - Returns: the cookies and the Unix time they were set at.
  private func exchangeWithFreshBearer(_ exchange: SharePointCookieExchange, via: AccountConfig, forceRefresh: Bool)
    async throws -> ([StoredCookie], Int64)
  {
    let scopes = exchange.site.scopes
    var fresh = forceRefresh
    while true {
      let (bearer, fromCache) = try await accessTokenAndSource(
        account: via.name, scopes: scopes, minValid: nil, forceRefresh: fresh)
      if !fromCache { fresh = true }  // just refreshed: a retry cannot help
      let now = time.now
      do {
        return (try await exchange.authenticate(bearer: bearer.accessToken, now: now), now)
      } catch let refused as SiteRefusedBearer {
        guard !fresh else { throw refused.providerError }
        diagnostics.note("\(exchange.site.host) refused the cached token of '\(via.name)' (HTTP 401); dropping it and refreshing once")
        try? await store.delete(.accessToken(via.name, scopes))
        fresh = true
      }
    }
  }

  private func importedCookies(_ account: AccountConfig, site: SharePointSite) async throws -> IssuedCookies {
    guard let record = try await loadCookieRecord(account.name) else {
      throw ProviderError.signInRequired(account: account.name, reason: ProviderError.notSignedIn)
    }
    let left = record.expiresOn - time.now
    guard left > 0 else {
      throw ProviderError.signInRequired(
        account: account.name,
        reason: "the imported SharePoint cookies expired at \(record.expiresOn) (Unix time) and cannot be renewed silently")
    }
    let warning = left < 86400
      ? "the imported SharePoint cookies of '\(account.name)' expire in \(left / 3600) h \(left % 3600 / 60) min; "
        + "run 'tokenbroker login \(account.name) --cookies-from FILE' with fresh cookies"
      : nil
    return IssuedCookies(account: account.name, site: site.origin, cookies: record.cookies, expiresOn: record.expiresOn, warning: warning)
  }

  /// Drops the cached cookies of a `cookie` account when one of their values equals `value` (git
  /// `erase` of a rejected cookie): the next `get` renews them at once.
  /// - Returns: whether they matched. - Throws: `StoreError`.
  func dropCookies(_ account: AccountConfig, matching value: Secret) async throws -> Bool {
    guard let record = try await loadCookieRecord(account.name),
      record.cookies.contains(where: { $0.value == value || Secret($0.name + "=" + $0.value.revealed) == value })
    else { return false }
    try await store.delete(ItemKey(account: account.name, kind: .cookies))
    return true
  }

  /// The stored cookies, or nil (a corrupt item counts as none). - Throws: `StoreError`.
  func loadCookieRecord(_ account: String) async throws -> CookieRecord? {
    try await loadRecord(ItemKey(account: account, kind: .cookies), named: "the stored cookies item", decode: CookieRecord.decode)
  }

  /// Caches exchanged cookies; a failure is only a warning (they are good either way).
  private func saveCookieRecord(_ record: CookieRecord, _ account: AccountConfig) async {
    let key = ItemKey(account: account.name, kind: .cookies)
    do {
      try await store.save(key, label: label(key, account), secret: record.encoded())
    } catch {
      warn("could not cache the cookies of '\(account.name)' (\(error)); they will be renewed next time")
    }
  }
}
