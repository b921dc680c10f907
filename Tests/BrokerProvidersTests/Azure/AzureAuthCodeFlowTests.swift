import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

@Suite struct AzureAuthCodeFlowTests {
  static let authorizeURL = "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize"
  let pkce = PKCE(verifier: Secret("VERIFIER-SENTINEL-0123456789012345678901234")) { _ in PKCETests.digest }

  func request(hint: String? = nil) -> BrowserSignInRequest {
    BrowserSignInRequest(
      port: 4242, scopes: ScopeSet([Fixtures.graph]), loginHint: hint, firstSignIn: true, pkce: pkce, state: "STATE-1")
  }

  func query(_ url: String) -> [String: [String]] {
    FormEncoding.parameters(String(url.split(separator: "?", maxSplits: 1)[1]))
  }

  @Test func authorizationURLCarriesPKCEStateAndLocalhostRedirect() async throws {
    let provider = try Fixtures.provider(FakeTransport([]), FakeTime())
    let auth = try await provider.browserAuthorization(request(hint: "user1@example.test"))
    #expect(auth.url.hasPrefix(Self.authorizeURL + "?"))
    #expect(auth.redirectURI == "http://localhost:4242/")
    #expect(provider.loopbackHost == .localhost)
    let q = query(auth.url)
    #expect(q["client_id"] == ["11111111-2222-3333-4444-555555555555"])
    #expect(q["response_type"] == ["code"])
    #expect(q["response_mode"] == ["query"])
    #expect(q["redirect_uri"] == ["http://localhost:4242/"])
    #expect(q["scope"] == ["https://graph.microsoft.com/.default openid profile offline_access"])
    #expect(q["state"] == ["STATE-1"])
    #expect(q["code_challenge"] == [PKCETests.challenge])
    #expect(q["code_challenge_method"] == ["S256"])
    #expect(q["login_hint"] == ["user1@example.test"])
    #expect(!auth.url.contains("VERIFIER-SENTINEL"))
  }

  @Test func authorizationEndpointOverride() async throws {
    var account = Fixtures.account()
    account.endpoints.authorization = "https://idp.example.test/authorize?x=1"
    let provider = try Fixtures.provider(FakeTransport([]), FakeTime(), account: account)
    let auth = try await provider.browserAuthorization(request())
    #expect(auth.url.hasPrefix("https://idp.example.test/authorize?x=1&client_id="))
    #expect(query(auth.url)["login_hint"] == nil)
  }

  @Test func redeemSendsCodeVerifierAndRedirectWithoutSecret() async throws {
    let transport = FakeTransport([Fixtures.tokenReply(at: "AT1", rt: "RT1", idToken: Fixtures.idToken)])
    let provider = try Fixtures.provider(transport, FakeTime(now: Fixtures.start))
    let auth = try await provider.browserAuthorization(request())
    let grant = try await provider.redeem(code: Secret("AC-SENTINEL"), for: auth, scopes: ScopeSet([Fixtures.graph]))
    #expect(grant.refreshToken == Secret("RT1"))
    #expect(grant.identity?.username == "user1@example.test")
    let sent = transport.requests[0]
    #expect(sent.url == Fixtures.tokenURL)
    #expect(sent.formFields == [
      "client_id": "11111111-2222-3333-4444-555555555555", "grant_type": "authorization_code",
      "code": "AC-SENTINEL", "redirect_uri": "http://localhost:4242/",
      "code_verifier": "VERIFIER-SENTINEL-0123456789012345678901234",
      "scope": "https://graph.microsoft.com/.default openid profile offline_access",
    ])
  }

  /// X07 step 5: a code redemption answered 429 gets one more try after the server's wait; an
  /// `invalid_grant` then is the code used up, exit 6 with a new login to run.
  @Test func X07_a429OnTheCodeIsRetriedOnceAfterItsWait() async throws {
    let throttle = FakeTransport.Reply.json("{}", status: 429, headers: [HTTPHeader("Retry-After", "4")])
    let time = FakeTime(now: Fixtures.start)
    let ok = FakeTransport([throttle, Fixtures.tokenReply(at: "AT1", rt: "RT1", idToken: Fixtures.idToken)])
    let provider = try Fixtures.provider(ok, time)
    let auth = try await provider.browserAuthorization(request())
    #expect(try await provider.redeem(code: Secret("AC"), for: auth, scopes: ScopeSet([Fixtures.graph])).refreshToken == Secret("RT1"))
    #expect(time.sleeps == [4])

    let usedUp = FakeTransport([throttle, Fixtures.oauthError("invalid_grant", description: "AADSTS54005: redeemed", codes: [54005])])
    let p2 = try Fixtures.provider(usedUp, FakeTime(now: Fixtures.start))
    let error = await #expect(throws: ProviderError.self) {
      try await p2.redeem(code: Secret("AC"), for: auth, scopes: ScopeSet([Fixtures.graph]))
    }
    guard case .loginFailed(_, let reason) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(reason.contains("the sign-in code was used up"))
    #expect("\(error!)".hasSuffix("run 'tokenbroker login work' again"))

    let twice = FakeTransport([throttle, throttle, Fixtures.tokenReply()])
    let p3 = try Fixtures.provider(twice, FakeTime(now: Fixtures.start))
    let again = await #expect(throws: ProviderError.self) {
      try await p3.redeem(code: Secret("AC"), for: auth, scopes: ScopeSet([Fixtures.graph]))
    }
    guard case .throttled = again else { Issue.record("got \(String(describing: again))"); return }
    #expect(twice.requests.count == 2)
  }

  @Test(arguments: [
    (501481, "PKCE code verifier did not match"), (54005, "already redeemed"), (70008, "expired"),
  ])
  func refusedCodesAreLoginFailures(_ code: Int, _ phrase: String) async throws {
    let transport = FakeTransport([
      Fixtures.oauthError("invalid_grant", description: "AADSTS\(code): echo AC-SENTINEL VERIFIER-SENTINEL-0123456789012345678901234", codes: [code])
    ])
    let provider = try Fixtures.provider(transport, FakeTime())
    let auth = try await provider.browserAuthorization(request())
    let error = await #expect(throws: ProviderError.self) {
      try await provider.redeem(code: Secret("AC-SENTINEL"), for: auth, scopes: ScopeSet([Fixtures.graph]))
    }
    guard case .loginFailed(let account, let reason) = error else {
      Issue.record("got \(String(describing: error))")
      return
    }
    #expect(account == "work")
    #expect(reason.contains(phrase))
    #expect(reason.contains("AADSTS\(code)"))
    #expect(!"\(error!)".contains("SENTINEL"))
  }

  @Test func redirectErrorsAreClassified() throws {
    let provider = try Fixtures.provider(FakeTransport([]), FakeTime())
    #expect(provider.authorizationError(.init(error: "access_denied", detail: nil), account: "work") == .declined(account: "work"))
    guard case .unavailable = provider.authorizationError(.init(error: "temporarily_unavailable", detail: nil), account: "work")
    else { Issue.record("not unavailable"); return }
    let rejected = provider.authorizationError(
      .init(error: "unauthorized_client", detail: "AADSTS700016: Application not found"), account: "work")
    guard case .rejected(_, "unauthorized_client", let detail) = rejected else { Issue.record("\(rejected)"); return }
    #expect(detail.contains("client-id"))
  }
}
