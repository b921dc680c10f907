import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// Azure Container Registry's `/oauth2/exchange` (interface.md §5; Azure/acr `docs/AAD-OAuth.md`).
@Suite struct AzureRegistryExchangeTests {
  static let host = "myreg.azurecr.io"
  static let accessToken = Secret(Fixtures.jwt(#"{"tid":"tid-1","aud":"https://containerregistry.azure.net","exp":1700003600}"#))
  static let registryToken = Fixtures.jwt(#"{"jti":"r1","exp":1700010800,"grant_type":"refresh_token"}"#)

  static func exchange(_ transport: FakeTransport, time: FakeTime = FakeTime()) async throws -> RegistryToken {
    try await AzureRegistryExchange(transport: transport, caFiles: ["/ca.pem"], time: time).exchange(
      host: host, account: "work", accessToken: accessToken, fallbackTenant: "organizations")
  }

  /// The error of an exchange answered `reply` every time.
  static func failure(_ reply: FakeTransport.Reply) async -> (any Error)? {
    do {
      _ = try await exchange(FakeTransport([reply, reply, reply]))
      return nil
    } catch { return error }
  }

  @Test func postsTheFormOfAzLoginAndReadsTheRefreshTokenAndItsExpiry() async throws {
    let transport = FakeTransport([.json(#"{"refresh_token":"\#(Self.registryToken)"}"#)])
    let token = try await Self.exchange(transport)
    #expect(token.refreshToken.revealed == Self.registryToken)
    #expect(token.expiresOn == 1_700_010_800)
    #expect(token.servedUntil == Int64(1_700_010_500))
    let request = try #require(transport.requests.first)
    #expect(request.method == "POST" && request.url == "https://myreg.azurecr.io/oauth2/exchange")
    #expect(request.caFiles == ["/ca.pem"])
    #expect(request.headers.contains { $0.name == "Content-Type" && $0.value == "application/x-www-form-urlencoded" })
    #expect(request.formFields == [
      "grant_type": "access_token", "service": Self.host, "tenant": "tid-1", "access_token": Self.accessToken.revealed,
    ])
    #expect(transport.requests.count == 1)
  }

  @Test func anOpaqueAccessTokenNamesTheAccountsTenantAndAnOpaqueRegistryTokenIsNeverKept() async throws {
    let transport = FakeTransport([.json(#"{"refresh_token":"opaque-registry-token"}"#)])
    let token = try await AzureRegistryExchange(transport: transport, caFiles: [], time: FakeTime()).exchange(
      host: "reg.example.test:5000", account: "work", accessToken: Secret("opaque"), fallbackTenant: "contoso.example")
    #expect(token.expiresOn == nil && token.servedUntil == nil)
    #expect(transport.requests.first?.formFields["tenant"] == "contoso.example")
    #expect(transport.requests.first?.formFields["service"] == "reg.example.test:5000")
  }

  @Test func status401IsSignInNeededNamingTheLogin() async {
    let error = await Self.failure(.json(#"{"errors":[{"code":"UNAUTHORIZED"}]}"#, status: 401))
    #expect(error as? RegistryError == .refused(account: "work", host: Self.host))
    #expect("\(error!)".contains("run 'tokenbroker login work'"))
  }

  @Test func status404NamesTheHost() async {
    let error = await Self.failure(.text("404 page not found", status: 404, contentType: "text/plain"))
    #expect(error as? RegistryError == .notFound(host: Self.host))
    #expect("\(error!)".contains("'myreg.azurecr.io'"))
  }

  @Test(arguments: [500, 502, 503, 429, 408])
  func serverTroubleIsUnavailable(status: Int) async {
    let error = await Self.failure(.json("{}", status: status))
    guard case .unavailable(let host, _) = error as? RegistryError else { Issue.record("\(String(describing: error))"); return }
    #expect(host == Self.host)
  }

  @Test func serverTroubleIsTriedThreeTimesAThrottleOnce() async throws {
    let time = FakeTime()
    let recovering = FakeTransport([
      .json("{}", status: 503), .failure(.cannotConnect(host: Self.host)), .json(#"{"refresh_token":"\#(Self.registryToken)"}"#),
    ])
    #expect(try await Self.exchange(recovering, time: time).refreshToken.revealed == Self.registryToken)
    #expect(time.sleeps == [1, 2])
    let down = FakeTransport([.json("{}", status: 502), .json("{}", status: 502), .json("{}", status: 502), .json("{}", status: 502)])
    await #expect(throws: RegistryError.unavailable(
      host: Self.host, detail: "its token exchange answered HTTP 502 (3 attempts); try again later")) {
      try await Self.exchange(down)
    }
    #expect(down.requests.count == 3)
    let throttled = FakeTransport([.json("{}", status: 429), .json("{}", status: 429)])
    await #expect(throws: RegistryError.self) { try await Self.exchange(throttled) }
    #expect(throttled.requests.count == 1)
    let tls = FakeTransport([.failure(.tls(host: Self.host, detail: "unknown CA")), .json("{}")])
    await #expect(throws: RegistryError.self) { try await Self.exchange(tls) }
    #expect(tls.requests.count == 1)
  }

  @Test func aPageOrAReplyWithoutTheTokenIsUnavailableNeverASignOut() async {
    for reply: FakeTransport.Reply in [
      .text("<html>proxy login</html>", status: 200), .json(#"{"access_token":"x"}"#), .json(#"{"refresh_token":""}"#),
      .json(#"{"refresh_token":"a\nb"}"#), .failure(.timedOut(host: Self.host)), .failure(.cannotConnect(host: Self.host)),
    ] {
      let error = await Self.failure(reply)
      guard case .unavailable = error as? RegistryError else { Issue.record("\(String(describing: error))"); continue }
      #expect(!"\(error!)".contains("login"))
    }
  }

  @Test func otherRefusalsAreRejectedAndNoMessageHoldsAToken() async {
    let error = await Self.failure(.json(#"{"errors":[{"code":"DENIED"}]}"#, status: 403))
    #expect(error as? RegistryError == .rejected(account: "work", host: Self.host, status: 403))
    for e: RegistryError in [
      .refused(account: "work", host: Self.host), .notFound(host: Self.host),
      .rejected(account: "work", host: Self.host, status: 400), .unavailable(host: Self.host, detail: "x"),
    ] {
      #expect(!"\(e)".contains(Self.accessToken.revealed) && !"\(e)".contains(Self.registryToken))
    }
  }
}
