import Testing

@testable import BrokerProviders

/// Form-encoded replies (GitHub's default) read as JSON objects of their fields.
@Suite struct FormReplyTests {
  @Test func fieldsBecomeStringsOfOneObjectAndNumbersStillRead() throws {
    let json = FormReply.json(Array("access_token=gho_A%2BB&scope=repo%2Cgist&token_type=bearer&expires_in=28800\n".utf8))
    let fields = try #require(JSONFields.parse(json))
    #expect(fields.string("access_token") == "gho_A+B")
    #expect(fields.string("scope") == "repo,gist")
    #expect(fields.int("expires_in") == 28800)
  }

  @Test func anErrorReplyIsAnOAuthError() throws {
    let json = FormReply.json(Array("error=bad_refresh_token&error_description=The+refresh+token+passed+is+incorrect".utf8))
    let reply = try #require(OAuthErrorReply.parse(json, status: 200, secrets: []))
    #expect(reply.error == "bad_refresh_token")
    #expect(reply.detailLine == "The refresh token passed is incorrect")
  }

  @Test func bytesThatAreNotUTF8StayAsTheyCame() {
    #expect(FormReply.json([0xFF, 0xFE]) == [0xFF, 0xFE])
  }
}
