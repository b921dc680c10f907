import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

@Suite struct IDTokenTests {
  @Test func claimsBecomeTheIdentity() throws {
    let id = try #require(IDToken.claims(of: Fixtures.idToken).identity)
    #expect(id == Identity(username: "user1@example.test", objectID: "oid-1", tenantID: "tid-1", subject: "sub-1"))
    #expect(id.display == "user1@example.test")
  }

  @Test func usernameFallsBackToEmailThenUPN() {
    #expect(IDToken.claims(of: Fixtures.jwt(#"{"email":"e@example.test","upn":"u@example.test"}"#)).identity?.username == "e@example.test")
    #expect(IDToken.claims(of: Fixtures.jwt(#"{"upn":"u@example.test"}"#)).identity?.username == "u@example.test")
    let oidOnly = IDToken.claims(of: Fixtures.jwt(#"{"oid":"oid-9"}"#)).identity
    #expect(oidOnly?.username == nil)
    #expect(oidOnly?.display == "oid-9")
  }

  @Test func base64URLCharactersAndMissingPaddingDecode() {
    // This payload's base64url has both "-" and "_", and two padding characters stripped.
    let id = IDToken.claims(of: Fixtures.jwt(#"{"preferred_username":"??>>~~"}"#)).identity
    #expect(id?.username == "??>>~~")
  }

  @Test func controlCharactersAreDroppedFromClaims() {
    // ESC, BEL, CR, LF, DEL and C1 CSI: the identity reaches terminals and git's username line.
    let id = IDToken.claims(
      of: Fixtures.jwt(#"{"preferred_username":"ev\u001b[31mil\u0007\r\n\u007f\u009b2J@example.test","oid":"o\u0000id"}"#)).identity
    #expect(id?.username == "ev[31mil2J@example.test")
    #expect(id?.objectID == "oid")
    #expect(IDToken.claims(of: Fixtures.jwt(#"{"preferred_username":"\u001b\u0007","oid":"oid-2"}"#)).identity?.display == "oid-2")
  }

  @Test(arguments: ["", "abc", "a.b", "a.%%%.c", "a.b.c.d.e", Fixtures.jwt("[]"), Fixtures.jwt("{}")])
  func unreadableTokensGiveNoIdentity(_ token: String) {
    #expect(IDToken.claims(of: token).identity == nil)
  }

  /// One rule names who signed in, whether the claims come in an ID token or a userinfo answer
  /// (OpenID Connect Core §5.1 gives both the same claim names).
  @Test(arguments: [
    #"{"preferred_username":"p@example.test","email":"e@example.test","sub":"s-1"}"#,
    #"{"email":"e@example.test","sub":"s-1"}"#, #"{"upn":"u@example.test","sub":"s-1"}"#, #"{"oid":"oid-9","tid":"t-1"}"#,
    #"{"sub":"s-1"}"#, #"{"preferred_username":"\u001b","email":"e@example.test"}"#, "{}",
  ])
  func anIDTokenAndAUserinfoAnswerNameTheSameIdentity(_ claims: String) async throws {
    let client = TokenEndpointClient(transport: FakeTransport([.json(claims)]), time: FakeTime(), caFiles: [], account: "w")
    let fromUserinfo = await UserInfo(client: client, url: "https://idp.example.test/userinfo").fetch(accessToken: Secret("AT"))
    #expect(fromUserinfo == IDToken.claims(of: Fixtures.jwt(claims)).identity)
  }

  /// The token reply reads its `id_token` once: the grant carries the claims the OpenID checks
  /// and the identity use; an unreadable one is kept as such (the checks refuse it).
  @Test func aTokenReplyCarriesItsIDTokensClaims() throws {
    func grant(_ idToken: String) throws -> TokenGrant {
      let body = #"{"access_token":"AT","id_token":"\#(idToken)"}"#
      return try TokenReply.grant(from: Array(body.utf8), requested: ScopeSet(["a"]), now: 1, host: "h")
    }
    let read = try grant(Fixtures.idToken)
    #expect(read.idToken?.sub == "sub-1")
    #expect(read.idToken?.isReadable == true)
    #expect(read.identity == read.idToken?.identity && read.identity != nil)
    let unreadable = try grant("abc")
    #expect(unreadable.idToken == .unreadable && unreadable.identity == nil)
  }

  @Test func claimsShowNoValues() {
    let claims = IDToken.claims(of: Fixtures.idToken)
    for text in [String(describing: claims), String(reflecting: claims), "\(claims)"] {
      #expect(!text.contains("user1") && !text.contains("sub-1"))
    }
  }
}
