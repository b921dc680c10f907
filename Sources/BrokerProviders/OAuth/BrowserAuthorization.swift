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

  /// The authorization request of the code grant with PKCE (RFC 6749 §4.1.1, RFC 7636 §4.3) at
  /// `endpoint`, redirected to `loopbackHost` on the request's port: `client_id`,
  /// `response_type=code`, `redirect_uri`, `scope`, `state`, the S256 `code_challenge` and
  /// `login_hint` when given, then the provider's own `extra` parameters (a nil value is left out).
  static func codeRequest(
    _ request: BrowserSignInRequest, endpoint: String, clientID: String, loopbackHost: LoopbackHost, scope: String,
    extra: [(String, String?)]
  ) -> BrowserAuthorization {
    let redirectURI = loopbackHost.redirectURI(port: request.port)
    let standard: [(String, String?)] = [
      ("client_id", clientID), ("response_type", "code"), ("redirect_uri", redirectURI), ("scope", scope),
      ("state", request.state), ("code_challenge", request.pkce.challenge), ("code_challenge_method", PKCE.method),
      ("login_hint", request.loginHint),
    ]
    return BrowserAuthorization(
      url: url(endpoint, standard + extra), redirectURI: redirectURI, state: request.state, clientID: clientID,
      pkce: request.pkce)
  }

  /// The token request fields that redeem `code` for this sign-in (RFC 6749 §4.1.3, RFC 7636
  /// §4.5), and the secrets among them, which every message of that request redacts.
  func redemption(code: Secret) -> (fields: [(String, String)], secrets: [String]) {
    let fields = [
      ("grant_type", "authorization_code"), ("code", code.revealed), ("redirect_uri", redirectURI),
      ("code_verifier", pkce.verifier.revealed),
    ]
    return (fields, [code.revealed, pkce.verifier.revealed])
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
