import BrokerCore
import BrokerTestSupport
import Synchronization
import Testing

@testable import BrokerProviders

@Suite struct TokenServiceBrowserLoginTests {
  static let clientID = "11111111-2222-3333-4444-555555555555"

  /// A `BrowserSignIn` whose browser step answers `verdict` (given the authorization) and
  /// records what it was shown.
  static func signIn(
    seen: Seen? = nil, _ verdict: @escaping @Sendable (BrowserAuthorization) -> RedirectVerdict
  ) -> BrowserSignIn {
    BrowserSignIn(port: 5151, sha256: { _ in PKCETests.digest }) { auth in
      seen?.add(auth)
      return verdict(auth)
    }
  }

  /// The authorizations the browser step was shown.
  final class Seen: Sendable {
    private let list = Mutex<[BrowserAuthorization]>([])
    func add(_ a: BrowserAuthorization) { list.withLock { $0.append(a) } }
    var all: [BrowserAuthorization] { list.withLock { $0 } }
  }

  @Test func storesTheRefreshTokenWithItsClientAndReplacesCachedTokens() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT-B", rt: "RT-B", idToken: Fixtures.idToken)])
    try await h.store.putAccessToken("AT-OLD", expiresOn: Fixtures.start + 3000, scopes: ScopeSet(["api://x/.default"]))
    let seen = Seen()
    let token = try await h.service.loginWithBrowser(
      account: "work", loginHint: nil, signIn: Self.signIn(seen: seen) { _ in .code(Secret("AC-1")) })
    #expect(token.identity == "user1@example.test")
    #expect(token.accessToken == Secret("AT-B"))
    let record = try #require(try await h.store.refreshRecord())
    #expect(record.refreshToken == Secret("RT-B"))
    #expect(record.clientID == Self.clientID)
    #expect(try await h.store.accessRecord(ScopeSet(["api://x/.default"])) == nil)
    #expect(try await h.store.accessRecord(h.scopes)?.accessToken == Secret("AT-B"))
    let auth = try #require(seen.all.first)
    #expect(auth.redirectURI == "http://localhost:5151/")
    #expect(auth.url.contains("state=\(auth.state)"))
    let form = h.transport.requests[0].formFields
    #expect(form["code"] == "AC-1")
    #expect(form["code_verifier"] == auth.pkce.verifier.revealed)
    #expect(form["redirect_uri"] == "http://localhost:5151/")
  }

  /// `login --scope S` asks for S, sends back the server's claims challenge, and
  /// caches the new token under S.
  @Test func aStepUpSignInAsksForItsScopesWithTheClaims() async throws {
    let vault = ScopeSet(["https://vault.azure.net/.default"])
    let claims = #"{"access_token":{"capolids":{"essential":true,"values":["p1"]}}}"#
    let h = Harness([Fixtures.tokenReply(at: "AT-V", rt: "RT-V", idToken: Fixtures.idToken)])
    let seen = Seen()
    _ = try await h.service.loginWithBrowser(
      account: "work", loginHint: nil, scopes: vault, claims: claims,
      signIn: Self.signIn(seen: seen) { _ in .code(Secret("AC-1")) })
    let url = try #require(seen.all.first?.url)
    #expect(url.contains("claims=" + FormEncoding.encode([("", claims)]).dropFirst()))
    #expect(url.contains("scope=https%3A%2F%2Fvault.azure.net%2F.default"))
    #expect(h.transport.requests[0].formFields["scope"]?.hasPrefix("https://vault.azure.net/.default") == true)
    #expect(try await h.store.accessRecord(vault)?.accessToken == Secret("AT-V"))
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT-V"))
  }

  @Test func stepUpClaimsComeFromARefreshForThoseScopes() async throws {
    let claims = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
    let escaped = claims.replacing("\"", with: "\\\"")
    let h = Harness([
      Fixtures.oauthError("interaction_required", codes: [50076], suberror: "basic_action", extra: #","claims":"\#(escaped)""#),
      Fixtures.tokenReply(at: "AT-G", rt: "RT-2"),
    ])
    try await h.store.putRefreshToken("RT1")
    let vault = ScopeSet(["https://vault.azure.net/.default"])
    #expect(await h.service.stepUpClaims(account: "work", scopes: vault) == claims)
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))  // kept
    #expect(await h.service.stepUpClaims(account: "work", scopes: h.scopes) == nil)  // no step-up needed
  }

  @Test func eachSignInHasItsOwnStateAndVerifier() async throws {
    let h = Harness([
      Fixtures.tokenReply(rt: "RT-1", idToken: Fixtures.idToken), Fixtures.tokenReply(rt: "RT-2", idToken: Fixtures.idToken),
    ])
    let seen = Seen()
    for _ in 0..<2 {
      _ = try await h.service.loginWithBrowser(
        account: "work", loginHint: nil, signIn: Self.signIn(seen: seen) { _ in .code(Secret("AC")) })
    }
    let auths = seen.all
    #expect(auths[0].state != auths[1].state)
    #expect(auths[0].pkce.verifier != auths[1].pkce.verifier)
  }

  @Test func aDeclinedSignInStoresNothing() async throws {
    let h = Harness([])
    await #expect(throws: ProviderError.declined(account: "work")) {
      try await h.service.loginWithBrowser(
        account: "work", loginHint: nil,
        signIn: Self.signIn { _ in .error(AuthorizationErrorInfo(error: "access_denied", detail: nil)) })
    }
    #expect(try await h.store.allKeys().isEmpty)
    #expect(h.transport.requests.isEmpty)
  }

  @Test func theConfiguredLoginHintIsUsedUnlessOneIsGiven() async throws {
    var account = Fixtures.account()
    account.loginHint = "config@example.test"
    let h = Harness(
      [Fixtures.tokenReply(rt: "RT", idToken: Fixtures.idToken), Fixtures.tokenReply(rt: "RT", idToken: Fixtures.idToken)],
      config: Fixtures.config([account]))
    let seen = Seen()
    _ = try await h.service.loginWithBrowser(account: "work", loginHint: nil, signIn: Self.signIn(seen: seen) { _ in .code(Secret("A")) })
    _ = try await h.service.loginWithBrowser(
      account: "work", loginHint: "flag@example.test", signIn: Self.signIn(seen: seen) { _ in .code(Secret("A")) })
    let urls = seen.all.map(\.url)
    #expect(urls[0].contains("login_hint=config%40example.test"))
    #expect(urls[1].contains("login_hint=flag%40example.test"))
  }

  @Test func aReplyWithoutRefreshTokenKeepsTheStoredOneOfTheSameUserOnly() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT-2", rt: nil, idToken: Fixtures.idToken)])
    try await h.store.putRefreshToken("RT-KEPT", clientID: Self.clientID)
    _ = try await h.service.loginWithBrowser(account: "work", loginHint: nil, signIn: Self.signIn { _ in .code(Secret("A")) })
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT-KEPT"))

    let other = Harness([Fixtures.tokenReply(at: "AT-2", rt: nil, idToken: Fixtures.idToken)])
    try await other.store.putRefreshToken("RT-OTHER-USER", identity: "user0@example.test", clientID: Self.clientID)
    let error = await #expect(throws: ProviderError.self) {
      try await other.service.loginWithBrowser(account: "work", loginHint: nil, signIn: Self.signIn { _ in .code(Secret("A")) })
    }
    guard case .rejected(_, "no_refresh_token", _) = error else { Issue.record("\(String(describing: error))"); return }
    #expect(try await other.store.refreshRecord()?.refreshToken == Secret("RT-OTHER-USER"))
  }

  @Test func deviceLoginRecordsTheClientToo() async throws {
    let h = Harness([Fixtures.deviceReply(), Fixtures.tokenReply(rt: "RT-D", idToken: Fixtures.idToken)])
    _ = try await h.service.loginWithDeviceCode(account: "work") { _ in }
    #expect(try await h.store.refreshRecord()?.clientID == Self.clientID)
  }
}
