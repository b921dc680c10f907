import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

@Suite struct GoogleAuthCodeFlowTests {
  let pkce = PKCE(verifier: Secret("VERIFIER-SENTINEL-G-01234567890123456789012")) { _ in PKCETests.digest }

  func request(first: Bool) -> BrowserSignInRequest {
    BrowserSignInRequest(
      port: 6262, scopes: ScopeSet(GoogleFixtures.account().scopes), loginHint: nil, firstSignIn: first, pkce: pkce,
      state: "STATE-G")
  }

  func query(_ url: String) -> [String: [String]] {
    FormEncoding.parameters(String(url.split(separator: "?", maxSplits: 1)[1]))
  }

  @Test func firstSignInAsksForConsentAndOfflineAccess() async throws {
    let provider = try GoogleFixtures.provider(FakeTransport([]))
    let auth = try await provider.browserAuthorization(request(first: true))
    #expect(auth.url.hasPrefix("https://accounts.google.com/o/oauth2/v2/auth?"))
    #expect(auth.redirectURI == "http://127.0.0.1:6262/")
    #expect(provider.loopbackHost == .ipv4)
    let q = query(auth.url)
    #expect(q["access_type"] == ["offline"])
    #expect(q["prompt"] == ["consent"])
    #expect(q["response_type"] == ["code"])
    #expect(q["redirect_uri"] == ["http://127.0.0.1:6262/"])
    #expect(q["code_challenge_method"] == ["S256"])
    #expect(q["code_challenge"] == [PKCETests.challenge])
    #expect(q["state"] == ["STATE-G"])
    #expect(q["client_id"] == [GoogleFixtures.clientID])
    #expect(Set((q["scope"]?.first ?? "").split(separator: " ")) == ["openid", "email", "https://www.googleapis.com/auth/cloud-platform"])
    #expect(!auth.url.contains("SENTINEL"))
  }

  @Test func laterSignInsDoNotForceConsent() async throws {
    let auth = try await GoogleFixtures.provider(FakeTransport([])).browserAuthorization(request(first: false))
    #expect(query(auth.url)["prompt"] == nil)
    #expect(query(auth.url)["access_type"] == ["offline"])
  }

  @Test func redeemSendsTheClientSecretAndVerifier() async throws {
    let transport = FakeTransport([GoogleFixtures.tokenReply(rt: "1//RT-G")])
    let provider = try GoogleFixtures.provider(transport)
    let auth = try await provider.browserAuthorization(request(first: true))
    let grant = try await provider.redeem(code: Secret("4/AC-G"), for: auth, scopes: ScopeSet(["openid"]))
    #expect(grant.refreshToken == Secret("1//RT-G"))
    #expect(grant.identity?.username == "user1@example.test")
    #expect(grant.identity?.subject == "110248495921238986420")
    #expect(transport.requests[0].url == GoogleFixtures.tokenURL)
    #expect(transport.requests[0].formFields == [
      "code": "4/AC-G", "client_id": GoogleFixtures.clientID, "client_secret": GoogleFixtures.secret,
      "redirect_uri": "http://127.0.0.1:6262/", "grant_type": "authorization_code",
      "code_verifier": "VERIFIER-SENTINEL-G-01234567890123456789012",
    ])
  }

  @Test func withoutAnIDTokenTheIdentityComesFromUserinfo() async throws {
    let transport = FakeTransport([
      GoogleFixtures.tokenReply(at: "ya29.AT-U", rt: "1//RT", idToken: nil),
      .json(#"{"sub":"42","email":"user2@example.test","email_verified":true}"#),
    ])
    let provider = try GoogleFixtures.provider(transport)
    let auth = try await provider.browserAuthorization(request(first: true))
    let grant = try await provider.redeem(code: Secret("AC"), for: auth, scopes: ScopeSet(["openid"]))
    #expect(grant.identity == Identity(username: "user2@example.test", subject: "42"))
    let userinfo = transport.requests[1]
    #expect(userinfo.method == "GET")
    #expect(userinfo.url == "https://openidconnect.googleapis.com/v1/userinfo")
    #expect(userinfo.headers.contains(HTTPHeader("Authorization", "Bearer ya29.AT-U")))
  }

  @Test func aFailingUserinfoLeavesTheIdentityUnknown() async throws {
    let transport = FakeTransport([GoogleFixtures.tokenReply(rt: "1//RT", idToken: nil), .text("no", status: 401)])
    let provider = try GoogleFixtures.provider(transport)
    let auth = try await provider.browserAuthorization(request(first: true))
    let grant = try await provider.redeem(code: Secret("AC"), for: auth, scopes: ScopeSet(["openid"]))
    #expect(grant.identity == nil)
  }

  @Test func aRefusedCodeIsALoginFailureWithoutSecrets() async throws {
    let transport = FakeTransport([GoogleFixtures.error("invalid_grant", "Bad Request")])
    let provider = try GoogleFixtures.provider(transport)
    let auth = try await provider.browserAuthorization(request(first: true))
    let error = await #expect(throws: ProviderError.self) {
      try await provider.redeem(code: Secret("AC"), for: auth, scopes: ScopeSet(["openid"]))
    }
    guard case .loginFailed(_, let reason) = error else { Issue.record("\(String(describing: error))"); return }
    #expect(reason.contains("PKCE"))
    #expect(!reason.contains("SENTINEL"))
  }

  @Test func redirectErrorsNameTheGoogleClient() throws {
    let provider = try GoogleFixtures.provider(FakeTransport([]))
    let e = provider.authorizationError(.init(error: "redirect_uri_mismatch", detail: nil), account: "g")
    guard case .rejected(_, _, let detail) = e else { Issue.record("\(e)"); return }
    #expect(detail.contains("Desktop app"))
    #expect(provider.authorizationError(.init(error: "access_denied", detail: nil), account: "g") == .declined(account: "g"))
  }
}
