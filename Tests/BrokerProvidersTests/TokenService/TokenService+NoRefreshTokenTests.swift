import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// bug-cases-3.md X03: an oidc sign-in whose reply carries no refresh token (offline_access
/// missing, refused or not allowed) does not complete: exit 6 naming the issuer and what to
/// change, and nothing is stored, instead of "working" for an hour.
@Suite struct TokenServiceNoRefreshTokenTests {
  func login(scopes: [String]? = nil, _ replies: [FakeTransport.Reply]) async throws -> (Harness, (any Error)?) {
    var a = OIDCFixtures.account()
    if let scopes { a.scopes = scopes }
    let h = Harness(OIDCFixtures.transport(replies), config: Fixtures.config([a]))
    do {
      _ = try await h.service.loginWithDeviceCode(account: "corp") { _ in }
      return (h, nil)
    } catch {
      return (h, error)
    }
  }

  @Test func test_X03_noRefreshTokenAtSignInIsExit6AndStoresNothing() async throws {
    let (h, error) = try await login(
      scopes: ["openid", "email"],
      [Fixtures.deviceReply(interval: "1"), Fixtures.tokenReply(at: "AT-1", rt: nil, idToken: OIDCFixtures.idToken())])
    #expect(
      error as? ProviderError
        == .loginFailed(
          account: "corp",
          reason: "idp.example.test issued no refresh token; add offline_access to scopes "
            + "(Okta: also allow the Refresh Token grant; Auth0: Allow Offline Access)"))
    #expect(try await h.store.allKeys().isEmpty)
  }

  @Test func test_X03_askedForOfflineAccessButGotNoneNamesTheClientSettings() async throws {
    let (h, error) = try await login(
      [Fixtures.deviceReply(interval: "1"), Fixtures.tokenReply(at: "AT-1", rt: nil, idToken: OIDCFixtures.idToken())])
    guard case .loginFailed(_, let reason)? = error as? ProviderError else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(reason.contains("although offline_access was asked for"))
    #expect(reason.contains("Allow Offline Access"))
    #expect(try await h.store.allKeys().isEmpty)
  }

  @Test func test_X03_keycloaksNotAllowedIsExit6WithTheRoleHint() async throws {
    let refusal = FakeTransport.Reply.json(
      #"{"error":"not_allowed","error_description":"Offline tokens not allowed for the user or client"}"#, status: 400)
    let (h, error) = try await login([Fixtures.deviceReply(interval: "1"), refusal])
    guard case .loginFailed(_, let reason)? = error as? ProviderError else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(reason.contains("Offline tokens not allowed for the user or client"))
    #expect(reason.contains("the user lacks the offline_access role"))
    #expect(try await h.store.allKeys().isEmpty)
  }

  @Test func test_X03_aRefusedOfflineAccessScopeIsExit6NamingIt() async throws {
    let refusal = FakeTransport.Reply.json(#"{"error":"invalid_scope","error_description":"invalid=[offline_access]"}"#, status: 400)
    let (h, error) = try await login([refusal])
    guard case .loginFailed(_, let reason)? = error as? ProviderError else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(reason.contains("offline_access"))
    #expect(reason.contains("set scopes without it"))
    #expect(OIDCFixtures.nonDiscovery(h.transport).count == 1)
  }
}
