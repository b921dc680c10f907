import BrokerCore

extension TokenService {
  /// `login ACCOUNT --cookies-from FILE` of an `imported-cookies` account (interface.md §3): takes
  /// the site's cookies from `text` (a Netscape cookie file or a `Cookie:` line), checks them with
  /// `GET SITE/_api/web` (`Accept: application/json;odata=verbose`, expects 200) and stores them
  /// with the earliest expiry among them, else `cookie-lifetime` s from now.
  /// - Returns: the stored cookies.
  /// - Throws: `ProviderError.unsupported` (not an imported-cookies account),
  ///   `.loginFailed` (no FedAuth/rtFa for the site, or the site refused them: 401/403),
  ///   `.unavailable` (other status); `HTTPError`; `StoreError`.
  public func importCookies(account name: String, text: String) async throws -> IssuedCookies {
    let account = try config.requireAccount(name)
    guard account.provider == .sharepoint, account.mode == .importedCookies else {
      throw ProviderError.unsupported("--cookies-from is for sharepoint accounts with mode = imported-cookies; '\(name)' is not one")
    }
    let site = try SharePointSite(account: account)
    let now = time.now
    let fallback = now + Int64(account.cookieLifetime)
    let cookies = CookieImport.parse(text, site: site, fallbackExpiry: fallback)
    let names = Set(cookies.map(\.name))
    guard names.contains("FedAuth") && names.contains("rtFa") || names.contains("SPOIDCRL") else {
      throw ProviderError.loginFailed(
        account: name, reason: "no FedAuth and rtFa cookies for \(site.host) in the input; export them again after signing in to \(site.origin)")
    }
    guard let transport else { throw ProviderError.unsupported("no HTTP transport to reach \(site.origin)") }
    let pairs = IssuedCookies(account: name, site: site.origin, cookies: cookies, expiresOn: fallback).pairs
    let response = try await transport.send(
      HTTPRequest(
        method: "GET", url: site.webURL,
        headers: [HTTPHeader("Accept", "application/json;odata=verbose"), HTTPHeader("Cookie", pairs)],
        caFiles: config.settings.caFiles(account)))
    switch response.status {
    case 200: break
    case 401, 403:
      throw ProviderError.loginFailed(
        account: name, reason: "\(site.host) did not accept the cookies (HTTP \(response.status)); sign in to the site again and export fresh cookies")
    default:
      throw ProviderError.unavailable(host: site.host, detail: "checking the cookies answered HTTP \(response.status); try again later")
    }
    let expiry = cookies.map(\.expires).filter { $0 > 0 }.min() ?? fallback
    guard expiry > now else {
      throw ProviderError.loginFailed(account: name, reason: "the cookies have already expired; export fresh ones")
    }
    let record = CookieRecord(cookies: cookies, obtainedAt: now, expiresOn: expiry)
    let key = ItemKey(account: name, kind: .cookies)
    try await store.save(key, label: label(key, account), secret: record.encoded())
    return IssuedCookies(account: name, site: site.origin, cookies: cookies, expiresOn: expiry)
  }
}
