import BrokerCore

extension TokenService {
  /// `mode = bearer` (interface.md §2.1, protocols.md §4.7): an access token for `SITE/.default`
  /// from the refresh token of the `via` Azure account, refreshed silently. The token is cached
  /// under the `via` account with the site's scope set, so each site has its own cached token.
  /// - Parameters:
  ///   - minValid: seconds the token must stay valid, or nil.
  ///   - forceRefresh: skip the cache.
  /// - Returns: the token, reported as the SharePoint account's, and whether it was the cached one.
  /// - Throws: `ConfigError.invalid` (bad `site`, missing `via`); `ProviderError.unsupported` for
  ///   the cookie modes (they hand out cookies: `token get`'s cookie path); what
  ///   `accessToken(account:scopes:minValid:forceRefresh:)` throws for the `via` account (e.g.
  ///   `.signInRequired` naming `via`).
  func sharePointBearer(_ account: AccountConfig, minValid: Int?, forceRefresh: Bool) async throws
    -> (token: IssuedToken, fromCache: Bool)
  {
    guard account.mode == .bearer else {
      throw ProviderError.unsupported(
        "'\(account.name)' hands out cookies (mode = \(account.mode.rawValue)), not a bearer token; "
          + "use 'tokenbroker token get \(account.name)' (--format token, header, json or cookiejar)")
    }
    let site = try SharePointSite(account: account)
    let via = try viaAccount(of: account)
    var (token, fromCache) = try await accessTokenAndSource(
      account: via.name, scopes: site.scopes, minValid: minValid, forceRefresh: forceRefresh)
    token.account = account.name
    token.provider = .sharepoint
    return (token, fromCache)
  }

  /// The Azure account named by `via`. - Throws: `ConfigError.invalid` when missing or not azure.
  func viaAccount(of account: AccountConfig) throws -> AccountConfig {
    guard let name = account.via, let via = config.account(named: name), via.provider == .azure else {
      throw ConfigError.accountKey(
        account.name, "via", "missing or not an azure account (name the azure account that signs in)")
    }
    return via
  }
}

extension TokenService {
  /// git `erase` for a SharePoint account: in bearer mode the token is cached under the `via`
  /// account; in cookie mode a matching cookie value drops the cached cookies (the next `get`
  /// renews them at once). Imported cookies are never deleted by `erase` (only `logout` does).
  /// - Returns: whether something cached matched.
  /// - Throws: `StoreError`.
  func eraseSharePoint(_ account: AccountConfig, token: Secret) async throws -> Bool {
    switch account.mode {
    case .bearer:
      guard let via = account.via else { return false }
      return try await eraseHandedOut(account: via, token: token)
    case .cookie:
      return try await dropCookies(account, matching: token)
    case .importedCookies:
      return false
    }
  }
}
