import Testing

@testable import BrokerProviders

@Suite struct IDTokenTests {
  @Test func claimsBecomeTheIdentity() throws {
    let id = try #require(IDToken.identity(from: Fixtures.idToken))
    #expect(id == Identity(username: "user1@example.test", objectID: "oid-1", tenantID: "tid-1", subject: "sub-1"))
    #expect(id.display == "user1@example.test")
  }

  @Test func usernameFallsBackToEmailThenUPN() {
    #expect(IDToken.identity(from: Fixtures.jwt(#"{"email":"e@example.test","upn":"u@example.test"}"#))?.username == "e@example.test")
    #expect(IDToken.identity(from: Fixtures.jwt(#"{"upn":"u@example.test"}"#))?.username == "u@example.test")
    let oidOnly = IDToken.identity(from: Fixtures.jwt(#"{"oid":"oid-9"}"#))
    #expect(oidOnly?.username == nil)
    #expect(oidOnly?.display == "oid-9")
  }

  @Test func base64URLCharactersAndMissingPaddingDecode() {
    // This payload's base64url has both "-" and "_", and two padding characters stripped.
    let id = IDToken.identity(from: Fixtures.jwt(#"{"preferred_username":"??>>~~"}"#))
    #expect(id?.username == "??>>~~")
  }

  @Test func controlCharactersAreDroppedFromClaims() {
    // ESC, BEL, CR, LF, DEL and C1 CSI: the identity reaches terminals and git's username line.
    let id = IDToken.identity(
      from: Fixtures.jwt(#"{"preferred_username":"ev\u001b[31mil\u0007\r\n\u007f\u009b2J@example.test","oid":"o\u0000id"}"#))
    #expect(id?.username == "ev[31mil2J@example.test")
    #expect(id?.objectID == "oid")
    #expect(IDToken.identity(from: Fixtures.jwt(#"{"preferred_username":"\u001b\u0007","oid":"oid-2"}"#))?.display == "oid-2")
  }

  @Test(arguments: ["", "abc", "a.b", "a.%%%.c", "a.b.c.d.e", Fixtures.jwt("[]"), Fixtures.jwt("{}")])
  func unreadableTokensGiveNoIdentity(_ token: String) {
    #expect(IDToken.identity(from: token) == nil)
  }
}
