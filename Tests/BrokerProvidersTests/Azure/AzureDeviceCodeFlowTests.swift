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
}
