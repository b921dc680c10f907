import FoundationEssentials

/// One HTTP cookie as stored and handed out (interface.md §3 `cookies` array, protocols.md §7.4).
public struct StoredCookie: Sendable, Equatable {
  public var name: String
  public var value: Secret
  /// The host the cookie is for (no leading dot: host-only).
  public var domain: String
  public var path: String
  /// Unix seconds; 0 for a session cookie.
  public var expires: Int64
  public var httpOnly: Bool
  public var secure: Bool

  public init(name: String, value: Secret, domain: String, path: String = "/", expires: Int64, httpOnly: Bool = true, secure: Bool = true) {
    self.name = name
    self.value = value
    self.domain = domain
    self.path = path
    self.expires = expires
    self.httpOnly = httpOnly
    self.secure = secure
  }
}

/// The document stored for `kind = cookies` (interface.md §7):
/// `{"v":1,"cookies":[{"name","value","domain","path","expires","http_only","secure"}],"obtained_at","expires_on"}`.
public struct CookieRecord: Sendable, Equatable {
  public var cookies: [StoredCookie]
  /// Unix seconds when the cookies were obtained (exchanged or imported).
  public var obtainedAt: Int64
  /// Unix seconds after which the cookies are not handed out (renewed, or for imported cookies:
  /// sign in again).
  public var expiresOn: Int64

  public init(cookies: [StoredCookie], obtainedAt: Int64, expiresOn: Int64) {
    self.cookies = cookies
    self.obtainedAt = obtainedAt
    self.expiresOn = expiresOn
  }

  private struct Entry: Codable {
    var name, value, domain, path: String
    var expires: Int64
    var http_only, secure: Bool
  }
  private struct Document: Codable {
    var v: Int
    var cookies: [Entry]
    var obtained_at: Int64
    var expires_on: Int64
  }

  public func encoded() -> Secret {
    let entries = cookies.map {
      Entry(name: $0.name, value: $0.value.revealed, domain: $0.domain, path: $0.path, expires: $0.expires, http_only: $0.httpOnly, secure: $0.secure)
    }
    return Secret(JSONText.encode(Document(v: 1, cookies: entries, obtained_at: obtainedAt, expires_on: expiresOn)))
  }

  /// - Throws: `StoreError.corrupt` naming `item`.
  public static func decode(_ secret: Secret, item: String) throws -> CookieRecord {
    guard let d = JSONText.decode(Document.self, secret.revealed), d.v == 1, !d.cookies.isEmpty else {
      throw StoreError.corrupt(item: item)
    }
    return CookieRecord(
      cookies: d.cookies.map {
        StoredCookie(
          name: $0.name, value: Secret($0.value), domain: $0.domain, path: $0.path, expires: OutsideTime.bounded($0.expires),
          httpOnly: $0.http_only, secure: $0.secure)
      }, obtainedAt: OutsideTime.bounded(d.obtained_at), expiresOn: OutsideTime.bounded(d.expires_on))
  }
}
