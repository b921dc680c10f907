import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// Google's device flow (protocols.md §3.4): `verification_url`, the device client, the client
/// secret on polls, 428/403 polling signals (B27).
@Suite struct GoogleDeviceCodeFlowTests {
  @Test func startUsesTheDeviceClientAndReadsVerificationURL() async throws {
    let transport = FakeTransport([GoogleFixtures.deviceReply])
    let auth = try await GoogleFixtures.provider(transport).startDeviceAuthorization(scopes: ScopeSet(["email"]))
    #expect(transport.requests[0].url == "https://oauth2.googleapis.com/device/code")
    #expect(transport.requests[0].formFields == ["client_id": GoogleFixtures.deviceClientID, "scope": "email openid"])
    #expect(auth.verificationURI == "https://www.google.com/device")
    #expect(auth.clientID == GoogleFixtures.deviceClientID)
    #expect(auth.expiresIn == 1800)
  }

  @Test func withoutADeviceClientTheDesktopClientIsUsed() async throws {
    let transport = FakeTransport([GoogleFixtures.deviceReply])
    let auth = try await GoogleFixtures.provider(transport, device: false).startDeviceAuthorization(scopes: ScopeSet(["email"]))
    #expect(auth.clientID == GoogleFixtures.clientID)
  }

  @Test func pollsWithTheSecretAndHonoursSlowDown() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([
      GoogleFixtures.deviceReply,
      GoogleFixtures.error("authorization_pending", "Precondition Required", status: 428),
      GoogleFixtures.error("slow_down", "Forbidden", status: 403),
      GoogleFixtures.tokenReply(rt: "1//RT-D"),
    ])
    let provider = try GoogleFixtures.provider(transport, time)
    let auth = try await provider.startDeviceAuthorization(scopes: ScopeSet(["email"]))
    let grant = try await provider.pollDeviceAuthorization(auth, scopes: ScopeSet(["email"]), timeout: 300)
    #expect(grant.refreshToken == Secret("1//RT-D"))
    #expect(time.sleeps == [5, 10])
    #expect(transport.requests[1].formFields == [
      "client_id": GoogleFixtures.deviceClientID, "client_secret": GoogleFixtures.deviceSecret,
      "device_code": "DC-SENTINEL-G", "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
    ])
  }

  @Test func accessDeniedIsDeclined() async throws {
    let transport = FakeTransport([GoogleFixtures.deviceReply, GoogleFixtures.error("access_denied", "Forbidden", status: 403)])
    let provider = try GoogleFixtures.provider(transport)
    let auth = try await provider.startDeviceAuthorization(scopes: ScopeSet(["email"]))
    await #expect(throws: ProviderError.declined(account: "g")) {
      try await provider.pollDeviceAuthorization(auth, scopes: ScopeSet(["email"]), timeout: 300)
    }
  }

  @Test func scopesOutsideTheAllowListSaySo() async throws {
    let transport = FakeTransport([
      GoogleFixtures.error("invalid_scope", "Invalid device flow scope: https://www.googleapis.com/auth/gmail.readonly")
    ])
    let error = await #expect(throws: ProviderError.self) {
      try await GoogleFixtures.provider(transport).startDeviceAuthorization(scopes: ScopeSet(["x"]))
    }
    guard case .rejected(_, "invalid_scope", let detail) = error else { Issue.record("\(String(describing: error))"); return }
    #expect(detail.contains("device flow allows only some scopes"))
  }
}
