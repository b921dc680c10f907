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

  /// Refresh-token lifetimes the provider states: Google's `refresh_token_expires_in`,
  /// Keycloak's `refresh_expires_in` (0: none); absent: unstated.
  @Test func Y09_statedRefreshTokenLifetimes() throws {
    #expect(try grant(#"{"access_token":"AT","refresh_token_expires_in":604799}"#).refreshTokenExpiresOn == 605_799)
    #expect(try grant(#"{"access_token":"AT","refresh_expires_in":1800}"#).refreshTokenExpiresOn == 2800)
    #expect(try grant(#"{"access_token":"AT","refresh_expires_in":0}"#).refreshTokenExpiresOn == nil)
    #expect(try grant(#"{"access_token":"AT"}"#).refreshTokenExpiresOn == nil)
  }

  @Test func expiresInAsAStringAndNoScopeOrRefreshToken() throws {
    let g = try grant(#"{"access_token":"AT","expires_in":"60","token_type":"bearer"}"#)
    #expect(g.expiresOn == 1060)
    #expect(g.refreshToken == nil)
    #expect(g.scopes == scopes.items)
    #expect(g.tokenType == "Bearer")
  }

  /// RFC 6749 Appendix A.12, A.17: a token is `1*VSCHAR`. A newline in one would add a header to
  /// `--format header`, a line to git's reply or a variable to `--format env`.
  @Test(arguments: [
    #"{"access_token":"AT\r\nX-Injected: 1","expires_in":60}"#,
    #"{"access_token":"AT","refresh_token":"RT\nprotocol=http","expires_in":60}"#,
    #"{"access_token":"AT","id_token":"a.b.c\u0000","expires_in":60}"#,
    #"{"access_token":"A\u00e9T","expires_in":60}"#,
  ])
  func aTokenOutsidePrintableASCIIIsUnavailable(_ body: String) {
    do {
      _ = try grant(body)
      Issue.record("accepted \(body)")
    } catch {
      guard case .unavailable(_, let detail) = error else { Issue.record("got \(error)"); return }
      #expect(detail.contains("RFC 6749"))
      #expect(!detail.contains("AT") && !detail.contains("RT"))
    }
  }

  @Test func aSpaceIsAPrintableCharacter() throws {
    #expect(try grant(#"{"access_token":"A T","expires_in":60}"#).accessToken == Secret("A T"))
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

  /// Lifetimes at the edge of Int64 are bounded (OutsideTime), not added to the clock: the sum
  /// overflowed and stopped the program after the provider had rotated the refresh token (found
  /// by make fuzz, seed Tests/Fuzz/Corpus/token-reply/expires-in-overflow).
  @Test func lifetimesTooLargeForTheClockAreBoundedNotOverflowed() throws {
    let huge = try grant(#"{"access_token":"AT","refresh_token":"RT","expires_in":9223372036854775807,"refresh_token_expires_in":"9223372036854775807"}"#)
    #expect(huge.expiresOn == 1000 + OutsideTime.limit)
    #expect(huge.refreshTokenExpiresOn == 1000 + OutsideTime.limit)
    #expect(huge.refreshToken == Secret("RT"))
    #expect(throws: ProviderError.self) { try grant(#"{"access_token":"AT","expires_in":-9223372036854775808}"#) }
  }
}
