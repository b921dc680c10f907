import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// Google keeps its wire (client_secret_post at the token endpoint, `client_id` alone at device
/// authorization, `token` alone at revocation) unless `client-auth` says otherwise, and gains
/// public device clients through an empty `device-client-secret`.
@Suite struct GoogleClientAuthenticationTests {
  func provider(_ transport: FakeTransport, _ edit: (inout AccountConfig) -> Void) throws -> GoogleProvider {
    var account = GoogleFixtures.account()
    edit(&account)
    return try GoogleProvider(
      account: account, settings: BrokerSettings(), transport: transport, time: FakeTime(now: Fixtures.start))
  }

  @Test func anEmptyDeviceClientSecretIsAPublicDeviceClient() async throws {
    let transport = FakeTransport([GoogleFixtures.deviceReply, GoogleFixtures.tokenReply(rt: "1//RT")])
    let p = try provider(transport) { $0.deviceClientSecret = Secret("") }
    let authorization = try await p.startDeviceAuthorization(scopes: ScopeSet(["email"]))
    _ = try await p.pollDeviceAuthorization(authorization, scopes: ScopeSet(["email"]), timeout: 60)
    for request in transport.requests {
      #expect(request.formFields["client_id"] == GoogleFixtures.deviceClientID)
      #expect(request.formFields["client_secret"] == nil)
      #expect(request.headers.allSatisfy { $0.name != "Authorization" })
    }
  }

  @Test func clientAuthBasicMovesTheSecretIntoTheHeaderEverywhere() async throws {
    let transport = FakeTransport([GoogleFixtures.tokenReply(), GoogleFixtures.deviceReply, .json("{}")])
    let p = try provider(transport) { $0.clientAuth = .clientSecretBasic }
    _ = try await p.refresh(Secret("1//RT"), scopes: ScopeSet(["email"]), clientID: nil)
    _ = try await p.startDeviceAuthorization(scopes: ScopeSet(["email"]))
    _ = try await p.revoke(Secret("1//RT"), clientID: nil)
    let desktop = "Basic " + ClientAuthentication.basicCredentials(id: GoogleFixtures.clientID, secret: Secret(GoogleFixtures.secret))
    let device = "Basic " + ClientAuthentication.basicCredentials(
      id: GoogleFixtures.deviceClientID, secret: Secret(GoogleFixtures.deviceSecret))
    #expect(transport.requests.map { $0.headers.last?.value } == [desktop, device, desktop])
    #expect(transport.requests.allSatisfy { $0.formFields["client_secret"] == nil })
  }

  @Test func byDefaultTheWireIsGooglesDocumentedOne() async throws {
    let transport = FakeTransport([GoogleFixtures.tokenReply(), GoogleFixtures.deviceReply, .json("{}")])
    let p = try provider(transport) { _ in }
    _ = try await p.refresh(Secret("1//RT"), scopes: ScopeSet(["email"]), clientID: nil)
    _ = try await p.startDeviceAuthorization(scopes: ScopeSet(["email"]))
    _ = try await p.revoke(Secret("1//RT"), clientID: nil)
    #expect(transport.requests[0].formFields["client_secret"] == GoogleFixtures.secret)
    #expect(Set(transport.requests[1].formFields.keys) == ["client_id", "scope"])
    #expect(transport.requests[2].formFields == ["token": "1//RT"])
    #expect(transport.requests.allSatisfy { r in r.headers.allSatisfy { $0.name != "Authorization" } })
  }
}
