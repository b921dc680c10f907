import BrokerCore

/// `POST SITE/_api/SP.OAuth.NativeClient/Authenticate` with a bearer token for `SITE/.default`,
/// answered with the `SPOIDCRL` cookie (protocols.md §4.2).
struct SharePointCookieExchange: Sendable {
  let site: SharePointSite
  let transport: any HTTPTransport
  let caFiles: [String]
  /// The account, for messages.
  let account: String

  /// - Parameter now: Unix seconds (for `Max-Age`).
  /// - Returns: the cookies the site set; `SPOIDCRL` among them.
  /// - Throws: `HTTPError` (no answer); `SiteRefusedBearer` for 401 (the site no longer accepts
  ///   this token, though it may not have expired: a fresh one may pass); `ProviderError.rejected`
  ///   for 403 (no SharePoint permission for the app, or a token for another site);
  ///   `.unavailable` for 5xx or an answer without `SPOIDCRL`.
  func authenticate(bearer: Secret, now: Int64) async throws -> [StoredCookie] {
    let request = HTTPRequest(
      method: "POST", url: site.authenticateURL,
      headers: [
        HTTPHeader("Authorization", "Bearer " + bearer.revealed),
        HTTPHeader("Accept", "application/json;odata=verbose"),
        HTTPHeader("X-IDCRL_ACCEPTED", "t"),
      ], caFiles: caFiles)
    let response = try await transport.send(request)
    switch response.status {
    case 200..<300: break
    case 401:
      throw SiteRefusedBearer(
        providerError: .rejected(
          account: account, error: "HTTP 401 from \(site.host)",
          detail: "the site refused even a freshly refreshed bearer token; check that the app registration of the via account "
            + "has SharePoint permissions for \(site.origin), or sign in again"))
    case 403:
      throw ProviderError.rejected(
        account: account, error: "HTTP \(response.status) from \(site.host)",
        detail: "the site refused the bearer token; check that the app registration of the via account has SharePoint permissions for \(site.origin)")
    default:
      throw ProviderError.unavailable(
        host: site.host, detail: "the cookie exchange answered HTTP \(response.status); try again later")
    }
    let cookies = response.headers.filter { $0.name.lowercased() == "set-cookie" }
      .compactMap { SetCookie.parse($0.value, defaultDomain: site.host, now: now) }
    guard cookies.contains(where: { $0.name == "SPOIDCRL" && !$0.value.isEmpty }) else {
      throw ProviderError.unavailable(
        host: site.host, detail: "the cookie exchange set no SPOIDCRL cookie; check the site URL, or use mode = bearer")
    }
    return cookies.filter { !$0.value.isEmpty }
  }
}

/// The site answered 401 to the bearer token of a cookie exchange; `providerError` is what to
/// report when a fresh token is refused as well.
struct SiteRefusedBearer: Error {
  let providerError: ProviderError
}
