import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

@Suite struct AzureProviderTests {
  @Test func defaultEndpointsFollowAuthorityAndTenant() {
    var a = Fixtures.account()
    a.authority = "https://login.microsoftonline.us/"
    let e = AzureEndpoints(account: a)
    #expect(e.token == "https://login.microsoftonline.us/contoso.onmicrosoft.com/oauth2/v2.0/token")
    #expect(e.deviceAuthorization == "https://login.microsoftonline.us/contoso.onmicrosoft.com/oauth2/v2.0/devicecode")
  }

  @Test func endpointOverridesWin() {
    var a = Fixtures.account()
    a.endpoints.token = "http://127.0.0.1:8080/t"
    a.endpoints.deviceAuthorization = "http://127.0.0.1:8080/d"
    let e = AzureEndpoints(account: a)
    #expect(e.token == "http://127.0.0.1:8080/t")
    #expect(e.deviceAuthorization == "http://127.0.0.1:8080/d")
  }

  @Test func caFilesOfBrokerAndAccountGoIntoEveryRequest() async throws {
    var a = Fixtures.account()
    a.caFile = "/home/u/account-ca.pem"
    var settings = BrokerSettings()
    settings.caFile = "/etc/broker-ca.pem"
    let transport = FakeTransport([Fixtures.tokenReply()])
    let p = try AzureProvider(account: a, settings: settings, transport: transport, time: FakeTime())
    _ = try await p.refresh(Secret("RT1"), scopes: ScopeSet([Fixtures.graph]))
    #expect(transport.requests[0].caFiles == ["/etc/broker-ca.pem", "/home/u/account-ca.pem"])
  }

  @Test func wireScopesPutResourcesFirstAndAddOIDCScopes() {
    let s = ScopeSet(["user.read", "https://graph.microsoft.com/Mail.Read", "email"])
    #expect(AzureScopes.wire(s, signIn: false) == "https://graph.microsoft.com/Mail.Read user.read email offline_access")
    #expect(
      AzureScopes.wire(ScopeSet([Fixtures.graph]), signIn: true)
        == "https://graph.microsoft.com/.default openid profile offline_access")
  }

  @Test func aMissingClientIDIsAConfigError() {
    var a = Fixtures.account()
    a.clientID = nil
    #expect(throws: ConfigError.self) {
      try AzureProvider(account: a, settings: BrokerSettings(), transport: FakeTransport([]), time: FakeTime())
    }
  }

  @Test(arguments: [ProviderKind.sharepoint])
  func otherProvidersAreNotImplementedYet(kind: ProviderKind) {
    let a = AccountConfig(name: "x", provider: kind)
    let error = #expect(throws: ProviderError.self) {
      try Providers.make(for: a, settings: BrokerSettings(), transport: FakeTransport([]), time: FakeTime())
    }
    guard case .unsupported(let text) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(text.contains("not implemented yet; "))
  }
}
