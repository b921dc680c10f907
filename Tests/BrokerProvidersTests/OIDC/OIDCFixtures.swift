import BrokerCore
import BrokerTestSupport
import Synchronization

@testable import BrokerProviders

/// An OpenID Provider at `https://idp.example.test/realms/main`, answered by URL.
enum OIDCFixtures {
  static let issuer = "https://idp.example.test/realms/main"
  static let discoveryURL = issuer + "/.well-known/openid-configuration"
  static let rfc8414URL = "https://idp.example.test/.well-known/oauth-authorization-server/realms/main"
  static let tokenURL = issuer + "/token"
  static let clientID = "cli-app"
  static let secret = "S3CRET-SENTINEL"

  static func document(
    issuer: String = OIDCFixtures.issuer, authMethods: [String]? = nil, scopes: [String]? = nil, iss: Bool = false,
    revocation: Bool = true
  ) -> String {
    var fields = [
      #""issuer":"\#(issuer)""#, #""authorization_endpoint":"\#(OIDCFixtures.issuer)/auth""#,
      #""token_endpoint":"\#(tokenURL)""#, #""device_authorization_endpoint":"\#(OIDCFixtures.issuer)/device""#,
      #""userinfo_endpoint":"\#(OIDCFixtures.issuer)/userinfo""#,
    ]
    if revocation { fields.append(#""revocation_endpoint":"\#(OIDCFixtures.issuer)/revoke""#) }
    if let authMethods { fields.append(#""token_endpoint_auth_methods_supported":[\#(quoted(authMethods))]"#) }
    if let scopes { fields.append(#""scopes_supported":[\#(quoted(scopes))]"#) }
    if iss { fields.append(#""authorization_response_iss_parameter_supported":true"#) }
    return "{" + fields.joined(separator: ",") + "}"
  }

  static func quoted(_ items: [String]) -> String { items.map { "\"\($0)\"" }.joined(separator: ",") }

  static func account(secret: String? = OIDCFixtures.secret) -> AccountConfig {
    var a = AccountConfig(name: "corp", provider: .oidc)
    a.issuer = issuer
    a.clientID = clientID
    a.clientSecret = secret.map(Secret.init)
    return a
  }

  static func idToken(
    nonce: String? = nil, aud: String = clientID, iss: String = issuer, exp: Int64 = Fixtures.start + 3600,
    sub: String? = "u-1", iat: Int64? = nil
  ) -> String {
    var claims = #""iss":"\#(iss)","aud":"\#(aud)","exp":\#(exp),"preferred_username":"alice""#
    if let iat { claims += #","iat":\#(iat)"# }
    if let sub { claims += #","sub":"\#(sub)""# }
    if let nonce { claims += #","nonce":"\#(nonce)""# }
    return Fixtures.jwt("{" + claims + "}")
  }

  /// Answers the discovery document at `discoveryURL` (404 elsewhere among `.well-known`), then
  /// `replies` in order for every other request.
  static func transport(document: String = document(), _ replies: [FakeTransport.Reply] = []) -> FakeTransport {
    let next = Mutex(0)
    return FakeTransport { request, _ in
      if request.url == discoveryURL { return .json(document) }
      if request.url.contains("/.well-known/") { return HTTPResponse(status: 404) }
      let i = next.withLock { n in
        defer { n += 1 }
        return n
      }
      guard i < replies.count else { throw HTTPError.other(host: "idp.example.test", detail: "no scripted reply") }
      switch replies[i] {
      case .response(let r): return r
      case .failure(let e): throw e
      }
    }
  }

  static func provider(
    _ transport: FakeTransport, account: AccountConfig = account(), cache: any DiscoveryCache = MemoryDiscoveryCache(),
    time: FakeTime = FakeTime(now: Fixtures.start)
  ) throws -> OIDCProvider {
    try OIDCProvider(account: account, settings: BrokerSettings(), transport: transport, time: time, discoveryCache: cache)
  }

  static func nonDiscovery(_ t: FakeTransport) -> [HTTPRequest] { t.requests.filter { !$0.url.contains("/.well-known/") } }
}
