import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

@Suite struct AzureDeviceCodeFlowTests {
  @Test func startSendsClientIDAndSignInScopes() async throws {
    let time = FakeTime(now: Fixtures.start)
    let transport = FakeTransport([Fixtures.deviceReply(interval: #""7""#, expiresIn: "600")])
    let auth = try await Fixtures.provider(transport, time).startDeviceAuthorization(scopes: ScopeSet([Fixtures.graph]))
    let request = transport.requests[0]
    #expect(request.url == Fixtures.deviceURL)
    #expect(request.formFields == [
      "client_id": "11111111-2222-3333-4444-555555555555",
      "scope": "https://graph.microsoft.com/.default openid profile offline_access",
    ])
    #expect(auth.userCode == "ABCD-EFGH")
    #expect(auth.verificationURI == "https://microsoft.com/devicelogin")
    #expect(auth.interval == 7)
    #expect(auth.expiresIn == 600)
    #expect(auth.issuedAt == Fixtures.start)
    #expect(auth.message?.hasPrefix("To sign in") == true)
  }

  @Test func aStepUpSendsTheClaimsChallengeBack() async throws {
    let transport = FakeTransport([Fixtures.deviceReply()])
    let claims = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
    _ = try await Fixtures.provider(transport, FakeTime(now: Fixtures.start))
      .startDeviceAuthorization(scopes: ScopeSet(["https://vault.azure.net/.default"]), claims: claims)
    #expect(transport.requests[0].formFields["claims"] == claims)
  }

  @Test func startErrorsAreClassified() async throws {
    let transport = FakeTransport([
      Fixtures.oauthError("invalid_scope", description: "AADSTS70011: The provided value for the input parameter 'scope' is not valid.", codes: [70011])
    ])
    let error = await #expect(throws: ProviderError.self) {
      try await Fixtures.provider(transport, FakeTime()).startDeviceAuthorization(scopes: ScopeSet(["bogus"]))
    }
    #expect(
      error == .rejected(account: "work", error: "invalid_scope", detail: "check the scopes of the account (or --scope) (AADSTS70011)"))
  }

  @Test func startRetriesServerErrors() async throws {
    let time = FakeTime()
    let transport = FakeTransport([.text("oops", status: 500), Fixtures.deviceReply()])
    _ = try await Fixtures.provider(transport, time).startDeviceAuthorization(scopes: ScopeSet([Fixtures.graph]))
    #expect(time.sleeps == [1])
  }

  /// A device-code sign-in that the tenant's policy refuses after approval (AADSTS53003 as
  /// `invalid_grant` or `access_denied`, 50005, a device requirement): exit 6 with the way that
  /// works (the browser flow, over SSH through a forwarded redirect port), not "declined".
  @Test(arguments: [("invalid_grant", 53003), ("access_denied", 53003), ("invalid_grant", 50005), ("invalid_grant", 530003)])
  func Y10_aDeviceCodeSignInBlockedByPolicyNamesTheBrowserFlowAndSSHForward(error: String, code: Int) async throws {
    let transport = FakeTransport([
      Fixtures.deviceReply(),
      Fixtures.oauthError("authorization_pending", codes: [70016]),
      Fixtures.oauthError(error, description: "AADSTS\(code): Access has been blocked by Conditional Access policies.", codes: [code]),
    ])
    let provider = try Fixtures.provider(transport, FakeTime(now: Fixtures.start))
    let auth = try await provider.startDeviceAuthorization(scopes: ScopeSet([Fixtures.graph]))
    let thrown = await #expect(throws: ProviderError.self) {
      try await provider.pollDeviceAuthorization(auth, scopes: ScopeSet([Fixtures.graph]), timeout: 300)
    }
    guard case .deviceCodeBlocked(let account, let reason, nil) = thrown else { Issue.record("got \(String(describing: thrown))"); return }
    #expect(account == "work" && reason.contains("AADSTS\(code)"))
    let message = thrown?.description ?? ""
    #expect(message.contains("'tokenbroker login work --browser --no-open'"))
    #expect(message.contains("'ssh -L 8400:127.0.0.1:8400 THIS-HOST'"))
    #expect(message.contains("set 'redirect-port = 8400' in [account work]"))
  }

  @Test func Y10_aConfiguredRedirectPortIsTheOneForwarded() {
    let e = ProviderError.deviceCodeBlocked(account: "work", reason: "access_denied, AADSTS53003", redirectPort: 53682)
    #expect(e.description.contains("'ssh -L 53682:127.0.0.1:53682 THIS-HOST'"))
    #expect(!e.description.contains("redirect-port ="))
  }

  @Test func Y10_accessDeniedWithoutAPolicyCodeIsStillDeclined() async throws {
    let transport = FakeTransport([Fixtures.deviceReply(), Fixtures.oauthError("access_denied", codes: [65004])])
    let provider = try Fixtures.provider(transport, FakeTime(now: Fixtures.start))
    let auth = try await provider.startDeviceAuthorization(scopes: ScopeSet([Fixtures.graph]))
    await #expect(throws: ProviderError.declined(account: "work")) {
      try await provider.pollDeviceAuthorization(auth, scopes: ScopeSet([Fixtures.graph]), timeout: 300)
    }
  }
}
