import Testing

@testable import BrokerProviders

/// Error bodies reduced to what is safe to show (bug-cases.md B29).
@Suite struct OAuthErrorReplyTests {
  func parse(_ json: String, secrets: [String] = []) -> OAuthErrorReply? {
    OAuthErrorReply.parse(Array(json.utf8), status: 400, secrets: secrets)
  }

  @Test func codesComeFromErrorCodes() throws {
    let e = try #require(parse(#"{"error":"invalid_grant","error_description":"AADSTS50173: The provided grant has expired.\r\nTrace ID: x","error_codes":[50173],"suberror":"bad_token"}"#))
    #expect(e.codes == ["AADSTS50173"])
    #expect(e.summary == "invalid_grant, bad_token, AADSTS50173")
  }

  @Test func codesFallBackToTheLeadingCodeOfTheDescription() throws {
    let e = try #require(parse(#"{"error":"invalid_scope","error_description":"AADSTS70011: The provided value for scope x is not valid."}"#))
    #expect(e.codes == ["AADSTS70011"])
    #expect(e.numericCodes == [70011])
  }

  @Test func withoutCodesTheFirstLineIsShownRedacted() throws {
    let json = #"{"error":"invalid_grant","error_description":"Token RT-SENTINEL-42 has been expired or revoked.\nsecond line RT-SENTINEL-42"}"#
    let e = try #require(parse(json, secrets: ["RT-SENTINEL-42"]))
    #expect(e.summary == "invalid_grant: Token <redacted> has been expired or revoked.")
  }

  @Test func tokenLikeRunsAreRedactedEvenWhenNotKnown() throws {
    let jwt = Fixtures.idToken
    let e = try #require(parse(#"{"error":"invalid_request","error_description":"bad token \#(jwt) sent"}"#))
    #expect(e.summary == "invalid_request: bad token <redacted> sent")
  }

  @Test func anErrorFieldThatIsNotACodeWordIsNotShown() throws {
    let e = try #require(parse(#"{"error":"RT-SENTINEL-42 is invalid"}"#))
    #expect(e.error == "unrecognised_error")
  }

  @Test func numbersAsStringsAndOddFieldsAreTolerated() throws {
    let e = try #require(parse(#"{"error":"slow_down","interval":"15","error_codes":"x","claims":{"access_token":{}}}"#))
    #expect(e.interval == 15)
    #expect(e.codes.isEmpty)
    #expect(e.hasClaims)
  }

  @Test func nonJSONOrNoErrorIsNil() {
    #expect(parse("<html>502 Bad Gateway</html>") == nil)
    #expect(parse(#"{"message":"nope"}"#) == nil)
    #expect(parse("[1,2]") == nil)
  }
}
