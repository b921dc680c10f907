import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// RFC 7009 at Google (protocols.md §3.6, §6; bug-cases.md B21).
@Suite struct GoogleRevocationTests {
  @Test func postsTheRefreshTokenInTheBodyNeverTheQuery() async throws {
    let transport = FakeTransport([.json("{}")])
    let outcome = try await GoogleFixtures.provider(transport).revoke(Secret("1//RT-REVOKE"), clientID: nil)
    #expect(outcome == .revoked)
    let request = transport.requests[0]
    #expect(request.method == "POST")
    #expect(request.url == "https://oauth2.googleapis.com/revoke")
    #expect(!request.url.contains("?"))
    #expect(request.formFields == ["token": "1//RT-REVOKE"])
  }

  @Test func anUnknownTokenIsAlreadyRevoked() async throws {
    let transport = FakeTransport([GoogleFixtures.error("invalid_token", "Token expired or revoked")])
    #expect(try await GoogleFixtures.provider(transport).revoke(Secret("1//RT"), clientID: nil) == .alreadyInvalid)
  }

  @Test func serverErrorsAreRetriedThenUnavailable() async throws {
    let time = FakeTime()
    let transport = FakeTransport([.text("", status: 503), .text("", status: 503), .text("", status: 503)])
    let error = await #expect(throws: ProviderError.self) {
      try await GoogleFixtures.provider(transport, time).revoke(Secret("1//RT"), clientID: nil)
    }
    guard case .unavailable = error else { Issue.record("\(String(describing: error))"); return }
    #expect(transport.requests.count == 3)
    #expect(time.sleeps == [1, 2])
  }

  @Test func theServiceReportsFailuresInsteadOfThrowing() async throws {
    let store = RecordingStore()
    try await store.putRefreshToken("1//RT", account: "g")
    let down = FakeTransport.Reply.failure(.cannotConnect(host: "oauth2.googleapis.com"))
    let service = TokenService(
      config: GoogleFixtures.config(), store: store, transport: FakeTransport([down, down, down]), time: FakeTime(),
      warn: { _ in })
    let report = try await service.revokeAtProvider(account: "g")
    #expect(report.outcome == nil)
    guard case .unavailable = report.failure else { Issue.record("\(String(describing: report.failure))"); return }
    #expect(try await store.refreshRecord("g") != nil)  // deleting is the caller's next step
  }
}
