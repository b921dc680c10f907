import BrokerCore

/// Cookies handed to a caller (`token get` of a `cookie` or `imported-cookies` account).
public struct IssuedCookies: Sendable {
  public var account: String
  /// The site origin the cookies are for.
  public var site: String
  public var cookies: [StoredCookie]
  /// Unix seconds after which they are not handed out.
  public var expiresOn: Int64
  /// A one-line warning for stderr (imported cookies with less than a day left), never a secret.
  public var warning: String?

  public init(account: String, site: String, cookies: [StoredCookie], expiresOn: Int64, warning: String? = nil) {
    self.account = account
    self.site = site
    self.cookies = cookies
    self.expiresOn = expiresOn
    self.warning = warning
  }

  /// `name=value; name=value` (the `Cookie` header's value).
  public var pairs: String { cookies.map { $0.name + "=" + $0.value.revealed }.joined(separator: "; ") }
}
