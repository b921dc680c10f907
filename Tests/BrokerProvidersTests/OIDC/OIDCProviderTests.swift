import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// `provider = oidc`: client authentication chosen from the document, the flows, the checks.
@Suite struct OIDCProviderTests {
  let scopes = ScopeSet(AccountConfig.defaultScopes(.oidc))
  func token(rt: String? = "RT-2", idToken: String? = nil) -> FakeTransport.Reply {
    Fixtures.tokenReply(at: "AT-OIDC", rt: rt, idToken: idToken)
  }
  func basic(_ id: String = OIDCFixtures.clientID, _ secret: String = OIDCFixtures.secret) -> String {
    "Basic " + ClientAuthentication.basicCredentials(id: id, secret: Secret(secret))
  }
  func authorization(_ header: HTTPRequest) -> String? { header.headers.last { $0.name == "Authorization" }?.value }

  @Test func aSecretMeansBasicUnlessTheServerListsOnlyPost() async throws {
    for (methods, expectBasic) in [(nil, true), (["client_secret_post"], false), (["client_secret_post", "client_secret_basic"], true)] {
      let transport = OIDCFixtures.transport(document: OIDCFixtures.document(authMethods: methods), [token()])
      _ = try await OIDCFixtures.provider(transport).refresh(Secret("RT-1"), scopes: scopes, clientID: nil)
      let request = OIDCFixtures.nonDiscovery(transport)[0]
      if expectBasic {
        #expect(authorization(request) == basic())
        #expect(request.formFields["client_secret"] == nil)
      } else {
        #expect(authorization(request) == nil)
        #expect(request.formFields["client_secret"] == OIDCFixtures.secret)
      }
    }
  }

  @Test func aPublicClientSendsItsIdOnly() async throws {
    let transport = OIDCFixtures.transport([token()])
    _ = try await OIDCFixtures.provider(transport, account: OIDCFixtures.account(secret: nil))
      .refresh(Secret("RT-1"), scopes: scopes, clientID: nil)
    let request = OIDCFixtures.nonDiscovery(transport)[0]
    #expect(request.formFields == ["client_id": OIDCFixtures.clientID, "grant_type": "refresh_token", "refresh_token": "RT-1"])
    #expect(authorization(request) == nil)
  }

  @Test func theDeviceFlowAuthenticatesAtBothEndpointsAndChecksTheIDToken() async throws {
    let device = Fixtures.deviceReply(interval: "1")
    let transport = OIDCFixtures.transport(
      document: OIDCFixtures.document(scopes: ["openid", "profile", "offline_access"]),
      [device, token(idToken: OIDCFixtures.idToken())])
    let p = try OIDCFixtures.provider(transport)
    let started = try await p.startDeviceAuthorization(scopes: scopes)
    let grant = try await p.pollDeviceAuthorization(started, scopes: scopes, timeout: 60)
    #expect(grant.identity?.display == "alice")
    let requests = OIDCFixtures.nonDiscovery(transport)
    #expect(requests.map(\.url) == [OIDCFixtures.issuer + "/device", OIDCFixtures.tokenURL])
    #expect(requests.allSatisfy { authorization($0) == basic() })
    // The default list cut to what the server offers; offline_access kept because it is listed.
    #expect(requests[0].formFields["scope"] == "offline_access openid profile")
  }

  @Test func anIDTokenForAnotherClientOrIssuerIsRefused() async throws {
    for jwt in [OIDCFixtures.idToken(aud: "other"), OIDCFixtures.idToken(iss: "https://evil.example.test"),
                OIDCFixtures.idToken(exp: Fixtures.start - 3600),
                OIDCFixtures.idToken(sub: nil), OIDCFixtures.idToken(sub: "")] {  // Core §2: sub is required
      let transport = OIDCFixtures.transport([Fixtures.deviceReply(interval: "1"), token(idToken: jwt)])
      let p = try OIDCFixtures.provider(transport)
      let started = try await p.startDeviceAuthorization(scopes: scopes)
      let error = await #expect(throws: ProviderError.self) {
        try await p.pollDeviceAuthorization(started, scopes: scopes, timeout: 60)
      }
      guard case .loginFailed(_, let reason) = error else { Issue.record("\(String(describing: error))"); continue }
      #expect(reason.contains("ID token"))
    }
  }

  /// Only the default scope list is cut to `scopes_supported`; scopes the user named are sent as
  /// named (offline_access added where listed).
  @Test func onlyTheDefaultScopesAreCutToWhatTheServerLists() throws {
    let metadata = try #require(OIDCMetadata.parse(
      Array(OIDCFixtures.document(scopes: ["openid", "offline_access"]).utf8), overrides: EndpointOverrides()))
    let account = OIDCFixtures.account()
    let defaults = ScopeSet(AccountConfig.defaultScopes(.oidc))
    #expect(Set(OIDCScopes.wire(defaults, account, metadata).split(separator: " ")) == ["openid", "offline_access"])
    let named = ScopeSet(["openid", "api://orders/read"])
    #expect(OIDCScopes.wire(named, account, metadata).split(separator: " ").contains("api://orders/read"))
  }

  @Test func theBrowserSignInSendsANonceAndTheIDTokenMustCarryIt() async throws {
    let transport = OIDCFixtures.transport([])
    let p = try OIDCFixtures.provider(transport)
    let request = BrowserSignInRequest(
      port: 8765, scopes: scopes, loginHint: nil, firstSignIn: true, pkce: PKCE.random(sha256: { _ in Array(repeating: 1, count: 32) }),
      state: "ST")
    let authorization = try await p.browserAuthorization(request)
    let nonce = try #require(authorization.nonce)
    #expect(authorization.url.hasPrefix(OIDCFixtures.issuer + "/auth?"))
    #expect(authorization.url.contains("nonce=" + nonce) && authorization.url.contains("code_challenge_method=S256"))
    #expect(authorization.redirectURI == "http://127.0.0.1:8765/")

    let good = OIDCFixtures.transport([token(idToken: OIDCFixtures.idToken(nonce: nonce))])
    let grant = try await OIDCFixtures.provider(good).redeem(code: Secret("CODE-1"), for: authorization, scopes: scopes)
    #expect(grant.identity?.display == "alice")

    let replayed = OIDCFixtures.transport([token(idToken: OIDCFixtures.idToken(nonce: "other"))])
    await #expect(throws: ProviderError.self) {
      try await OIDCFixtures.provider(replayed).redeem(code: Secret("CODE-1"), for: authorization, scopes: scopes)
    }
  }

  /// RFC 9207 §2.4: an `iss` other than the issuer is refused before the code is redeemed, and
  /// a missing one where the server promises it.
  @Test func theResponseIssuerIsChecked() async throws {
    var authorization = BrowserAuthorization(
      url: "u", redirectURI: "http://127.0.0.1:1/", state: "s", clientID: OIDCFixtures.clientID,
      pkce: PKCE.random(sha256: { _ in Array(repeating: 1, count: 32) }))
    authorization.responseIssuer = "https://evil.example.test"
    let transport = OIDCFixtures.transport([token()])
    await #expect(throws: ProviderError.self) {
      try await OIDCFixtures.provider(transport).redeem(code: Secret("C"), for: authorization, scopes: scopes)
    }
    authorization.responseIssuer = nil
    let promised = OIDCFixtures.transport(document: OIDCFixtures.document(iss: true), [token()])
    await #expect(throws: ProviderError.self) {
      try await OIDCFixtures.provider(promised).redeem(code: Secret("C"), for: authorization, scopes: scopes)
    }
    #expect(OIDCFixtures.nonDiscovery(transport).isEmpty && OIDCFixtures.nonDiscovery(promised).isEmpty)
  }

  @Test func revokeSendsTheHintAndTheClientAuthentication() async throws {
    let transport = OIDCFixtures.transport([.json("{}")])
    let p = try OIDCFixtures.provider(transport)
    #expect(try await p.revoke(Secret("RT-1"), clientID: nil) == .revoked)
    let request = OIDCFixtures.nonDiscovery(transport)[0]
    #expect(request.url == OIDCFixtures.issuer + "/revoke")
    #expect(request.formFields == ["token": "RT-1", "token_type_hint": "refresh_token"])
    #expect(authorization(request) == basic())
    #expect(p.revocationHost == "idp.example.test")
    let none = OIDCFixtures.transport(document: OIDCFixtures.document(revocation: false))
    #expect(try await OIDCFixtures.provider(none).revoke(Secret("RT-1"), clientID: nil) == .noEndpoint)
  }

  @Test func aDeadRefreshTokenIsRejectedAndABare400IsNot() async throws {
    let dead = OIDCFixtures.transport([Fixtures.oauthError("invalid_grant", codes: [])])
    await #expect(throws: RefreshTokenRejected.self) {
      try await OIDCFixtures.provider(dead).refresh(Secret("RT-1"), scopes: scopes, clientID: nil)
    }
    let bare = OIDCFixtures.transport([.text("", status: 400, contentType: "text/plain")])
    await #expect(throws: ProviderError.refusedWithoutReason(account: "corp", host: "idp.example.test", status: 400)) {
      try await OIDCFixtures.provider(bare).refresh(Secret("RT-1"), scopes: scopes, clientID: nil)
    }
  }

  /// X05 step 4: a device request with a secret refused as `unauthorized_client` (Auth0's 403) is a
  /// sign-in that did not complete, naming the device client and the empty `device-client-secret`;
  /// other errors keep `signInError`'s wording.
  @Test func test_X05_aRefusedDeviceSecretNamesTheDeviceClientAndTheFix() throws {
    let reply = try #require(OAuthErrorReply.parse(Array(#"{"error":"unauthorized_client"}"#.utf8), status: 403, secrets: []))
    let error = OIDCErrors.deviceSignInError(reply, account: "acme", host: "idp.example.test", deviceClientID: "cli")
    guard case .loginFailed(let account, let reason) = error else { Issue.record("got \(error)"); return }
    #expect(account == "acme")
    #expect(reason.contains("device client 'cli'") && reason.contains("empty device-client-secret"))
    let scope = try #require(OAuthErrorReply.parse(Array(#"{"error":"invalid_scope"}"#.utf8), status: 400, secrets: []))
    #expect(
      OIDCErrors.deviceSignInError(scope, account: "acme", host: "h", deviceClientID: "cli")
        == OIDCErrors.signInError(scope, account: "acme", host: "h"))
  }

  /// X05 step 5: `invalid_client` on a refresh (a rotated secret) is the client's problem: it
  /// names the client that refreshed (the one that obtained the token) and its auth method, and is
  /// no `RefreshTokenRejected`, so nothing is deleted.
  @Test func test_X05_invalidClientOnRefreshNamesTheClientAndMethod() async throws {
    let transport = OIDCFixtures.transport([
      Fixtures.oauthError("invalid_client", description: "Invalid client secret provided.", codes: [], status: 401)
    ])
    let error = await #expect(throws: ProviderError.self) {
      try await OIDCFixtures.provider(transport).refresh(Secret("RT-1"), scopes: scopes, clientID: nil)
    }
    guard case .clientRejected(let account, let host, let clientID, let method, _) = error else {
      Issue.record("got \(String(describing: error))"); return
    }
    #expect((account, host, clientID, method) == ("corp", "idp.example.test", OIDCFixtures.clientID, "client_secret_basic"))
    let text = error?.description ?? ""
    #expect(text.contains("'\(OIDCFixtures.clientID)'") && text.contains("client_secret_basic") && !text.contains(OIDCFixtures.secret))
  }

  /// As for every provider: an interaction error of an OpenID Provider is a step-up
  /// for the scopes asked for, with its claims challenge; the refresh token is not rejected.
  @Test func anInteractionErrorIsAStepUpForTheRequestedScopes() async throws {
    let api = ScopeSet(["api:write"])
    let transport = OIDCFixtures.transport([
      Fixtures.oauthError("interaction_required", extra: #","claims":"{\"id_token\":{\"acr\":{\"essential\":true}}}""#)
    ])
    await #expect(
      throws: ProviderError.stepUpRequired(
        account: "corp", reason: "idp.example.test asks for an interactive sign-in (interaction_required)",
        scopes: ["api:write"], claims: #"{"id_token":{"acr":{"essential":true}}}"#)
    ) {
      try await OIDCFixtures.provider(transport).refresh(Secret("RT-1"), scopes: api, clientID: nil)
    }
  }
}
