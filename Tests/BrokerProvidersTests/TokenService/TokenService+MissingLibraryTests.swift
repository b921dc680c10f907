import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// libcurl is loaded at the first request: when it cannot be, no flow can make any request, and
/// every flow lets the loader's own error through as it is (BrokerCLI's `ErrorMapping` says it:
/// exit 4, what failed, install libcurl4), never as a provider's unavailability, and deletes
/// nothing. `TokenEndpointClient.classify` decides it for discovery and token endpoints alike.
@Suite struct TokenServiceMissingLibraryTests {
  static let missing = HTTPError.libraryUnavailable(detail: "libcurl.so.4: cannot open shared object file")

  enum Flow: String, CaseIterable, Sendable { case refresh, deviceLogin, browserLogin, revoke }

  /// Every account kind that makes requests: Azure (the token endpoint), Google (revocation
  /// too), OIDC (discovery first).
  static let accounts = [Fixtures.account(), GoogleFixtures.account(), OIDCFixtures.account()]

  static func run(_ flow: Flow, _ service: TokenService, account: String) async throws {
    switch flow {
    case .refresh:
      _ = try await service.accessToken(account: account, scopes: nil, minValid: nil, forceRefresh: true)
    case .deviceLogin:
      _ = try await service.loginWithDeviceCode(account: account) { _ in }
    case .browserLogin:
      let signIn = BrowserSignIn(port: 5151, sha256: { _ in PKCETests.digest }) { _ in .code(Secret("AC-1")) }
      _ = try await service.loginWithBrowser(account: account, loginHint: nil, signIn: signIn)
    case .revoke:
      _ = try await service.revokeAtProvider(account: account)
    }
  }

  @Test(arguments: Flow.allCases, accounts)
  func theLoadersErrorReachesTheCallerAsItIs(flow: Flow, account: AccountConfig) async throws {
    if flow == .revoke && account.provider == .azure { return }  // no endpoint: nothing to load libcurl for
    let transport = FakeTransport { _, _ in throw Self.missing }
    let h = Harness(transport, config: Fixtures.config([account]))
    try await h.store.putRefreshToken("RT1", account: account.name)
    await #expect(throws: Self.missing) { try await Self.run(flow, h.service, account: account.name) }
    #expect(transport.requests.count == 1)  // not retried, nor the second discovery place tried
    #expect(try await h.store.refreshRecord(account.name)?.refreshToken == Secret("RT1"))
  }
}
