import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// bug-cases-3.md X08: `kube-token = id` hands out the OpenID Connect ID token, cached next to the
/// access token of its reply and judged by its own `exp`; refreshes ask for `openid`.
@Suite struct TokenServiceIDTokenTests {
  static func account() -> AccountConfig {
    var a = OIDCFixtures.account()
    a.kubeToken = .id
    return a
  }
  let scopes = ScopeSet(AccountConfig.defaultScopes(.oidc))

  func reply(at: String, rt: String? = "RT-2", idToken: String?) -> FakeTransport.Reply {
    Fixtures.tokenReply(at: at, rt: rt, expiresIn: "3600", idToken: idToken)
  }

  func harness(_ replies: [FakeTransport.Reply], document: String = OIDCFixtures.document()) async throws -> Harness {
    let h = Harness(
      OIDCFixtures.transport(document: document, replies), config: Fixtures.config([Self.account()]))
    try await h.store.putRefreshToken("RT-1", account: "corp")
    return h
  }

  func get(_ h: Harness, _ kind: CredentialKind, force: Bool = false) async throws -> IssuedToken {
    try await h.service.accessToken(account: "corp", scopes: nil, minValid: nil, forceRefresh: force, kind: kind)
  }

  @Test func test_X08_theIDTokenIsHandedWithItsOwnExpAndTheAccessTokenStaysTheDefault() async throws {
    let id1 = OIDCFixtures.idToken(exp: Fixtures.start + 300)
    let h = try await harness([reply(at: "AT-1", idToken: id1)])
    let t = try await get(h, .idToken)
    #expect(t.accessToken == Secret(id1))
    #expect(t.expiresOn == Fixtures.start + 300)  // the ID token's exp, not the access token's 3600 s
    let request = OIDCFixtures.nonDiscovery(h.transport)[0]
    #expect(request.formFields["scope"]?.split(separator: " ").contains("openid") == true)
    // Kept next to the access token of the same reply.
    let record = try #require(try await h.store.accessRecord(scopes, account: "corp"))
    #expect(record.accessToken == Secret("AT-1"))
    #expect(record.idToken == Secret(id1))
    #expect(record.idTokenExpiresOn == Fixtures.start + 300)
    // The default format still gets the access token, from the cache.
    let access = try await get(h, .accessToken)
    #expect(access.accessToken == Secret("AT-1"))
    #expect(access.expiresOn == Fixtures.start + 3600)
    #expect(try await get(h, .idToken).accessToken == Secret(id1))
    #expect(OIDCFixtures.nonDiscovery(h.transport).count == 1)
  }

  @Test func test_X08_anIDTokenNearItsExpIsRefreshedWhileTheAccessTokenIsStillValid() async throws {
    let id1 = OIDCFixtures.idToken(exp: Fixtures.start + 300)
    let id2 = OIDCFixtures.idToken(exp: Fixtures.start + 500)
    let h = try await harness([reply(at: "AT-1", idToken: id1), reply(at: "AT-2", idToken: id2)])
    _ = try await get(h, .idToken)
    h.time.advance(by: 200)  // 100 s left of a 300 s token: under half its lifetime
    let t = try await get(h, .idToken)
    #expect(t.accessToken == Secret(id2))
    #expect(t.expiresOn == Fixtures.start + 500)
    let requests = OIDCFixtures.nonDiscovery(h.transport)
    #expect(requests.count == 2)
    #expect(requests.allSatisfy { $0.formFields["scope"]?.split(separator: " ").contains("openid") == true })
  }

  /// docs/bug-cases-4.md Y03: `exp` and `iat` are the provider's clock; the ID token expires on
  /// this machine's at the reply's arrival plus `exp` − `iat`. Provider 10 minutes ahead, 60 s
  /// tokens: refreshed after 60 s (it was handed out for 660 s, dead at the cluster after 60).
  @Test func test_Y03_anIDTokenFromAProviderClockAheadExpiresByItsLifetime() async throws {
    let id1 = OIDCFixtures.idToken(exp: Fixtures.start + 660, iat: Fixtures.start + 600)
    let id2 = OIDCFixtures.idToken(exp: Fixtures.start + 730, iat: Fixtures.start + 670)
    let h = try await harness([reply(at: "AT-1", idToken: id1), reply(at: "AT-2", idToken: id2)])
    #expect(try await get(h, .idToken).expiresOn == Fixtures.start + 60)
    h.time.advance(by: 70)
    let t = try await get(h, .idToken)
    #expect(t.accessToken == Secret(id2))
    #expect(t.expiresOn == Fixtures.start + 130)
    #expect(OIDCFixtures.nonDiscovery(h.transport).count == 2)
  }

  /// Y03, the provider 7 minutes behind: a fresh 300 s ID token's `exp` is already past on this
  /// machine's clock; it is handed out, expiring 300 s from its arrival (it was refused as
  /// "already expired").
  @Test func test_Y03_anIDTokenFromAProviderClockBehindIsHandedOut() async throws {
    let id1 = OIDCFixtures.idToken(exp: Fixtures.start - 120, iat: Fixtures.start - 420)
    let h = try await harness([reply(at: "AT-1", idToken: id1)])
    let t = try await get(h, .idToken)
    #expect(t.accessToken == Secret(id1))
    #expect(t.expiresOn == Fixtures.start + 300)
  }

  @Test func test_X08_aRefreshWithoutAnIDTokenIsSignInNeededAndKeepsTheRotatedRefreshToken() async throws {
    let h = try await harness([reply(at: "AT-1", rt: "RT-2", idToken: nil)])
    await #expect(
      throws: ProviderError.signInRequired(
        account: "corp",
        reason: "idp.example.test returned no ID token on refresh; the cluster needs one (kube-token = id)")
    ) { try await get(h, .idToken) }
    #expect(try await h.store.refreshRecord("corp")?.refreshToken == Secret("RT-2"))
    // The access token of that reply still serves other callers, without a refresh.
    #expect(try await get(h, .accessToken).accessToken == Secret("AT-1"))
    #expect(OIDCFixtures.nonDiscovery(h.transport).count == 1)
  }

  @Test func test_X08_anIDTokenWithoutExpIsNotHandedOut() async throws {
    let noExp = Fixtures.jwt(#"{"iss":"\#(OIDCFixtures.issuer)","aud":"cli-app","sub":"u-1"}"#)
    let h = try await harness([reply(at: "AT-1", idToken: noExp)])
    await #expect(throws: ProviderError.self) { try await get(h, .idToken) }
    #expect(try await h.store.accessRecord(scopes, account: "corp")?.idToken == nil)
    #expect(try await h.store.refreshRecord("corp") != nil)
  }

  /// Without `openid` in the account's scopes the ID token is asked for all the same; the
  /// access-token default asks for what is configured.
  @Test func test_X08_openidIsAddedToScopesThatLackIt() async throws {
    var a = Self.account()
    a.scopes = ["api"]
    let id1 = OIDCFixtures.idToken()
    let h = Harness(
      OIDCFixtures.transport([reply(at: "AT-1", idToken: id1)]), config: Fixtures.config([a]))
    try await h.store.putRefreshToken("RT-1", account: "corp")
    #expect(try await get(h, .idToken).accessToken == Secret(id1))
    #expect(OIDCFixtures.nonDiscovery(h.transport)[0].formFields["scope"] == "api openid")
    #expect(try await h.store.accessRecord(ScopeSet(["api", "openid"]), account: "corp")?.idToken == Secret(id1))
  }

  /// A sign-in's ID token is cached with its access token: the first exec-credential after
  /// `login` needs no refresh.
  @Test func test_X08_theSignInsIDTokenIsCached() async throws {
    let id1 = OIDCFixtures.idToken(exp: Fixtures.start + 300)
    let h = Harness(
      OIDCFixtures.transport([Fixtures.deviceReply(interval: "1"), reply(at: "AT-1", idToken: id1)]),
      config: Fixtures.config([Self.account()]))
    _ = try await h.service.loginWithDeviceCode(account: "corp") { _ in }
    let requests = OIDCFixtures.nonDiscovery(h.transport).count
    let t = try await get(h, .idToken)
    #expect(t.accessToken == Secret(id1))
    #expect(t.expiresOn == Fixtures.start + 300)
    #expect(OIDCFixtures.nonDiscovery(h.transport).count == requests)
  }
}
