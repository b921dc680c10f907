import BrokerCore
import Testing

@Suite struct BearerChallengeTests {
  @Test func azureDevOpsChallengeNamesTheTenant() {
    let c = BearerChallenge.parse("Bearer authorization_uri=https://login.microsoftonline.com/22222222-BBBB-4bbb-8bbb-000000000002")
    #expect(c.count == 1)
    #expect(c.first?.tenant == "22222222-bbbb-4bbb-8bbb-000000000002")
    #expect(BearerChallenge.parse(#"Basic realm="x", Bearer authorization_uri="https://login.microsoftonline.com/common""#).first?.tenant == nil)
    #expect(BearerChallenge.parse(#"Basic realm="https://dev.azure.com/""#).isEmpty)
  }

  @Test func claimsChallengeInBase64OrJSON() {
    let json = #"{"access_token":{"nbf":{"essential":true,"value":"1"}}}"#
    let b64 = "eyJhY2Nlc3NfdG9rZW4iOnsibmJmIjp7ImVzc2VudGlhbCI6dHJ1ZSwidmFsdWUiOiIxIn19fQ"  // unpadded base64url
    for value in [#""\#(b64)""#, b64, #""\#(json.replacing("\"", with: "\\\""))""#] {
      let c = BearerChallenge.parse(#"Bearer realm="", error="insufficient_claims", claims=\#(value)"#)
      #expect(c.first?.claims == json, "\(value)")
    }
    #expect(BearerChallenge.parse(#"Bearer error="invalid_token", claims="e30=""#).first?.claims == nil)
  }

  @Test func malformedValuesGiveNothing() {
    for bad in [#"Bearer realm="open"#, "Bearer a=", ",,,=", "Bearer error=\"insufficient_claims\", claims=\"W10=\""] {
      #expect(BearerChallenge.parse(bad).allSatisfy { $0.claims == nil && $0.tenant == nil }, "\(bad)")
    }
  }
}
