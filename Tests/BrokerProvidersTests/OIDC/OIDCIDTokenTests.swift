import BrokerCore
import Testing

@testable import BrokerProviders

/// The refresh rules of `OIDCIDToken.verifyRefreshed` (bug-cases-3 X04; OpenID Connect Core §12.2).
@Suite struct OIDCIDTokenTests {
  func check(_ jwt: String, subject: String? = "u-1", nonce: String? = "N1") throws(ProviderError) {
    try OIDCIDToken.verifyRefreshed(
      IDToken.claims(of: jwt), issuer: OIDCFixtures.issuer, clientID: OIDCFixtures.clientID, subject: subject,
      nonce: nonce, account: "kc")
  }

  @Test func test_X04_noNonceOrTheSignInsIsAccepted() throws {
    try check(OIDCFixtures.idToken())
    try check(OIDCFixtures.idToken(nonce: "N1"))
    // A device sign-in sent no nonce: nothing to compare.
    try check(OIDCFixtures.idToken(nonce: "N2"), nonce: nil)
  }

  @Test func test_X04_anotherNonceOrAudienceOrIssuerIsRefused() {
    for jwt in [
      OIDCFixtures.idToken(nonce: "N2"), OIDCFixtures.idToken(aud: "other"),
      OIDCFixtures.idToken(iss: OIDCFixtures.issuer + "/"),
    ] {
      #expect {
        try check(jwt)
      } throws: { error in
        guard case .rejected(_, _, let detail) = error as? ProviderError else { return false }
        return detail.contains("rotated refresh token was kept") && detail.contains(OIDCFixtures.issuer)
      }
    }
  }

  @Test func test_X04_anotherSubjectNeedsASignIn() {
    #expect {
      try check(OIDCFixtures.idToken(sub: "S2"))
    } throws: { error in
      guard case .signInRequired(_, let reason) = error as? ProviderError else { return false }
      return reason.contains("different user")
    }
    // No sub recorded (documents written before): not compared.
    #expect(throws: Never.self) { try check(OIDCFixtures.idToken(sub: "S2"), subject: nil) }
  }

  /// bug-cases-3 X02: `accounts.google.com` without the scheme, for Google's issuer only.
  @Test func test_X02_schemeLessIssIsGooglesAlone() throws {
    func verify(_ iss: String, issuer: String) throws(ProviderError) {
      _ = try OIDCIDToken.verify(
        IDToken.claims(of: OIDCFixtures.idToken(iss: iss)), issuer: issuer, clientID: OIDCFixtures.clientID, nonce: nil,
        now: Fixtures.start, account: "g")
    }
    try verify("accounts.google.com", issuer: "https://accounts.google.com")
    try verify("https://accounts.google.com", issuer: "https://accounts.google.com")
    #expect(throws: ProviderError.self) { try verify("idp.example.test/realms/main", issuer: OIDCFixtures.issuer) }
    #expect(throws: ProviderError.self) { try verify("accounts.google.com", issuer: "https://accounts.google.com/") }
  }
}
