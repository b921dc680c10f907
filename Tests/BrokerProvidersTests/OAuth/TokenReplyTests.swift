import BrokerCore
import Testing

@testable import BrokerProviders

@Suite struct TokenReplyTests {
  let scopes = ScopeSet([Fixtures.graph])
  func grant(_ json: String) throws(ProviderError) -> TokenGrant {
    try TokenReply.grant(from: Array(json.utf8), requested: scopes, now: 1000, host: "login.example.test")
  }

  @Test func parsesAFullReply() throws {
    let g = try grant(#"{"token_type":"Bearer","scope":"https://graph.microsoft.com/User.Read profile","expires_in":3599,"ext_expires_in":3599,"access_token":"AT","refresh_token":"RT","id_token":"\#(Fixtures.idToken)"}"#)
    #expect(g.accessToken == Secret("AT"))
    #expect(g.expiresOn == 4599)
    #expect(g.refreshToken == Secret("RT"))
    #expect(!g.refreshTokenWasEmpty)
    #expect(g.scopes == ["https://graph.microsoft.com/User.Read", "profile"])
    #expect(g.identity?.objectID == "oid-1")
    #expect(g.tokenType == "Bearer")
  }

  @Test func expiresInAsAStringAndNoScopeOrRefreshToken() throws {
    let g = try grant(#"{"access_token":"AT","expires_in":"60","token_type":"bearer"}"#)
    #expect(g.expiresOn == 1060)
    #expect(g.refreshToken == nil)
    #expect(g.scopes == scopes.items)
    #expect(g.tokenType == "Bearer")
  }

  @Test func anEmptyRefreshTokenIsAbsent() throws {
    let g = try grant(#"{"access_token":"AT","expires_in":60,"refresh_token":""}"#)
    #expect(g.refreshToken == nil)
    #expect(g.refreshTokenWasEmpty)
  }

  @Test(arguments: ["<html>Sign in to the Wi-Fi</html>", "{}", #"{"access_token":""}"#, "null"])
  func aSuccessWithoutAnAccessTokenIsUnavailable(_ body: String) {
    #expect(throws: ProviderError.self) { try grant(body) }
    do {
      _ = try grant(body)
    } catch {
      #expect(error.description.contains("unexpected reply from login.example.test"))
      #expect(error.description.contains("proxy"))
    }
  }

  @Test func anAlreadyExpiredTokenIsRefused() {
    #expect(throws: ProviderError.self) { try grant(#"{"access_token":"AT","expires_in":0}"#) }
  }
}
