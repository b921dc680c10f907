import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

@Suite struct GoogleRefreshFlowTests {
  @Test func refreshUsesTheTokensOwnClientAndSendsNoScopeForTheDefaultSet() async throws {
    let transport = FakeTransport([GoogleFixtures.tokenReply(), GoogleFixtures.tokenReply()])
    let provider = try GoogleFixtures.provider(transport)
    let defaults = ScopeSet(GoogleFixtures.account().scopes)
    let grant = try await provider.refresh(Secret("1//RT"), scopes: defaults, clientID: GoogleFixtures.deviceClientID)
    #expect(grant.refreshToken == nil)  // Google does not rotate
    #expect(transport.requests[0].formFields == [
      "client_id": GoogleFixtures.deviceClientID, "client_secret": GoogleFixtures.deviceSecret,
      "grant_type": "refresh_token", "refresh_token": "1//RT",
    ])
    _ = try await provider.refresh(Secret("1//RT"), scopes: ScopeSet(["email"]), clientID: nil)
    #expect(transport.requests[1].formFields["client_id"] == GoogleFixtures.clientID)
    #expect(transport.requests[1].formFields["client_secret"] == GoogleFixtures.secret)
    #expect(transport.requests[1].formFields["scope"] == "email")
  }

  @Test func invalidGrantMeansTheTokenIsDead() async throws {
    let transport = FakeTransport([GoogleFixtures.error("invalid_grant", "Token has been expired or revoked.")])
    let error = await #expect(throws: RefreshTokenRejected.self) {
      try await GoogleFixtures.provider(transport).refresh(Secret("1//RT"), scopes: ScopeSet(["email"]))
    }
    #expect(error?.reason.contains("invalid_grant") == true)
  }

  @Test func invalidRaptKeepsTheToken() async throws {
    let transport = FakeTransport([
      GoogleFixtures.error("invalid_grant", "reauth related error (invalid_rapt)", subtype: "invalid_rapt")
    ])
    let error = await #expect(throws: ProviderError.self) {
      try await GoogleFixtures.provider(transport).refresh(Secret("1//RT"), scopes: ScopeSet(["email"]))
    }
    guard case .signInRequired(_, let reason) = error else { Issue.record("\(String(describing: error))"); return }
    #expect(reason.contains("invalid_rapt"))
  }

  @Test func aWrongClientIsAConfigProblem() async throws {
    let transport = FakeTransport([GoogleFixtures.error("unauthorized_client", "Unauthorized", status: 401)])
    let error = await #expect(throws: ProviderError.self) {
      try await GoogleFixtures.provider(transport).refresh(Secret("1//RT"), scopes: ScopeSet(["email"]))
    }
    guard case .rejected(_, "unauthorized_client", let detail) = error else { Issue.record("\(String(describing: error))"); return }
    #expect(detail.contains("client-secret"))
    #expect(!detail.contains("SENTINEL"))
  }

  @Test func theServiceKeepsTheStoredTokenWhenNoneComesBack() async throws {
    let h = Harness([GoogleFixtures.tokenReply(at: "ya29.NEW")], config: GoogleFixtures.config())
    try await h.store.putRefreshToken("1//RT-STAYS", account: "g", clientID: GoogleFixtures.clientID)
    let token = try await h.service.accessToken(account: "g", scopes: nil, minValid: nil, forceRefresh: true)
    #expect(token.accessToken == Secret("ya29.NEW"))
    #expect(try await h.store.refreshRecord("g")?.refreshToken == Secret("1//RT-STAYS"))
    #expect(await h.store.writes.filter { $0.contains("refresh-token") }.isEmpty)
  }

  @Test func missingClientSecretIsAConfigError() {
    var account = GoogleFixtures.account()
    account.clientSecret = nil
    #expect(throws: ConfigError.self) {
      try GoogleProvider(account: account, settings: BrokerSettings(), transport: FakeTransport([]), time: FakeTime())
    }
  }
}
