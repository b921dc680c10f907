import BrokerCore

/// What a browser sign-in needs from the caller: the loopback port, PKCE, `state`.
public struct BrowserSignInRequest: Sendable {
  /// The port the loopback listener is bound to.
  public var port: Int
  /// The account's scopes (the provider adds what it needs on the wire).
  public var scopes: ScopeSet
  /// `login_hint`, or nil.
  public var loginHint: String?
  /// No refresh token is stored for the account yet (Google then asks for consent, so that it
  /// issues a refresh token: protocols.md §3.2).
  public var firstSignIn: Bool
  public var pkce: PKCE
  /// The anti-CSRF value the redirect must carry back (RFC 6749 §10.12).
  public var state: String
  /// A claims challenge a refresh was answered with (OpenID Connect Core §5.5), sent back as
  /// `claims`; nil: none.
  public var claims: String?

  public init(
    port: Int, scopes: ScopeSet, loginHint: String?, firstSignIn: Bool, pkce: PKCE, state: String, claims: String? = nil
  ) {
    self.claims = claims
    self.port = port
    self.scopes = scopes
    self.loginHint = loginHint
    self.firstSignIn = firstSignIn
    self.pkce = pkce
    self.state = state
  }

  /// 32 random octets, base64url.
  public static func randomState() -> String { RandomValue.base64URL(octets: 32) }
}

/// One browser sign-in in progress (RFC 6749 §4.1.1 with RFC 7636 and RFC 8252).
public struct BrowserAuthorization: Sendable {
  /// The authorization URL to open. It carries `client_id`, `redirect_uri`, `state` and the code
  /// challenge, never a secret, so it may go on a browser's command line and the terminal.
  public var url: String
  /// `redirect_uri`, sent again when the code is redeemed.
  public var redirectURI: String
  /// The `state` the redirect must carry.
  public var state: String
  /// The client the sign-in is for; stored with the refresh token.
  public var clientID: String
  /// The PKCE pair; the verifier goes only into the token request.
  public var pkce: PKCE
  /// The `nonce` sent (OpenID Connect Core §3.1.2.1), which the ID token must carry back.
  public var nonce: String?
  /// The `iss` the redirect carried (RFC 9207), set by the caller before redeeming.
  public var responseIssuer: String?

  public init(url: String, redirectURI: String, state: String, clientID: String, pkce: PKCE) {
    self.url = url
    self.redirectURI = redirectURI
    self.state = state
    self.clientID = clientID
    self.pkce = pkce
  }

  /// `endpoint` with `parameters` added to its query (form encoding: RFC 6749 Appendix B).
  static func url(_ endpoint: String, _ parameters: [(String, String?)]) -> String {
    let present = parameters.compactMap { name, value in value.map { (name, $0) } }
    let separator = endpoint.contains("?") ? "&" : "?"
    return endpoint + separator + FormEncoding.encode(present)
  }
}

/// Where the loopback redirect points (protocols.md §2.9, §3.2; RFC 8252 §7.3).
public enum LoopbackHost: Sendable, Equatable {
  /// `http://localhost:PORT/` (Azure: its portal refuses 127.0.0.1); listen on 127.0.0.1 and ::1.
  case localhost
  /// `http://127.0.0.1:PORT/` (Google desktop clients); listen on 127.0.0.1.
  case ipv4

  /// The redirect URI for `port`, with the trailing slash the providers send back.
  public func redirectURI(port: Int) -> String {
    switch self {
    case .localhost: return "http://localhost:\(port)/"
    case .ipv4: return "http://127.0.0.1:\(port)/"
    }
  }

  /// Whether the listener should also serve ::1.
  public var wantsIPv6: Bool { self == .localhost }
}
