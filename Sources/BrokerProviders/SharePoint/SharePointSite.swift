import BrokerCore

/// The `site` of a SharePoint account (interface.md §2.1): an `https://host[:port]` origin, no path
/// (`http://` only for loopback hosts, as every endpoint).
public struct SharePointSite: Sendable, Equatable {
  /// `scheme://authority`, without a trailing slash, e.g. `https://contoso.sharepoint.com`.
  public var origin: String
  /// The lower-cased host, without port: the domain of the cookies the site sets.
  public var host: String
  /// True for `https://` sites (cookies are then `secure`).
  public var secure: Bool

  /// - Throws: `ConfigError.invalid` naming the account's `site` key when it is missing, not an
  ///   http(s) origin, or carries a path.
  public init(account: AccountConfig) throws {
    func bad(_ problem: String) -> ConfigError { .accountKey(account.name, "site", problem) }
    guard let raw = account.site else { throw bad("missing (the site origin, e.g. https://contoso.sharepoint.com)") }
    guard let url = EndpointURL(raw) else { throw bad("'\(raw)' is not an https:// origin") }
    guard url.path.isEmpty || url.path == "/" else { throw bad("'\(raw)' has a path; give the origin only, e.g. https://contoso.sharepoint.com") }
    guard url.scheme == "https" || url.isLoopback else { throw bad("'\(raw)' is not https://; use the https origin") }
    origin = url.scheme + "://" + url.authority.lowercased()
    host = url.host
    secure = url.scheme == "https"
  }

  /// The scope of a bearer token for the site: `SITE/.default` (protocols.md §4.7).
  public var scopes: ScopeSet { ScopeSet([origin + "/.default"]) }

  /// `SITE/_api/SP.OAuth.NativeClient/Authenticate` (protocols.md §4.2).
  public var authenticateURL: String { origin + "/_api/SP.OAuth.NativeClient/Authenticate" }

  /// `SITE/_api/web`: the check of imported cookies.
  public var webURL: String { origin + "/_api/web" }
}
