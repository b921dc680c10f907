import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// What a failed refresh does to the stored refresh token and to the cached access token
/// (interface.md §6).
@Suite struct TokenServiceFailedRefreshTests {
  static let graph = ScopeSet([Fixtures.graph])
  static let devops = ScopeSet(["499b84ac-1321-427f-aa17-267ca6975798/.default"])

  /// Conditional Access refusing Graph to an unmanaged device (AADSTS530003 as `invalid_grant`,
  /// no `suberror`) keeps the refresh token: it still serves Azure DevOps.
  @Test(arguments: [530003, 50131])
  func Y08_aDeviceComplianceRefusalKeepsTheRefreshTokenForOtherResources(code: Int) async throws {
    let h = Harness([
      Fixtures.oauthError("invalid_grant", description: "AADSTS\(code): Your device is required to be managed", codes: [code]),
      Fixtures.tokenReply(at: "AT-DEVOPS", rt: "RT2"),
    ])
    try await h.store.putRefreshToken("RT1")
    let error = await #expect(throws: ProviderError.self) { try await h.get(scopes: Self.graph) }
    guard case .refusedByPolicy(_, _, let scopes) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(scopes == [Fixtures.graph])
    #expect(await h.store.writes.isEmpty)
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))
    #expect(try await h.get(scopes: Self.devops).accessToken == Secret("AT-DEVOPS"))
    #expect(h.refreshTokensSent == ["RT1", "RT1"])
  }
}
