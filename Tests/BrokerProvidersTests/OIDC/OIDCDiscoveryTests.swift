import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// interface.md §2.1 "Discovery": where the document is, the exact issuer match, the cache.
@Suite struct OIDCDiscoveryTests {
  @Test func documentURLsFollowOIDCThenRFC8414() throws {
    let p = try OIDCFixtures.provider(FakeTransport([]))
    #expect(p.discovery.documentURLs == [OIDCFixtures.discoveryURL, OIDCFixtures.rfc8414URL])
    var slash = OIDCFixtures.account()
    slash.issuer = "https://tenant.auth0.example/"
    let auth0 = try OIDCFixtures.provider(FakeTransport([]), account: slash)
    #expect(auth0.discovery.documentURLs == [
      "https://tenant.auth0.example/.well-known/openid-configuration",
      "https://tenant.auth0.example/.well-known/oauth-authorization-server",
    ])
  }

  @Test func aMismatchedIssuerIsAConfigErrorNamingBoth() async throws {
    let transport = OIDCFixtures.transport(document: OIDCFixtures.document(issuer: "https://evil.example.test"))
    let error = await #expect(throws: ConfigError.self) { try await OIDCFixtures.provider(transport).discovery.metadata() }
    let text = "\(String(describing: error))"
    #expect(text.contains(OIDCFixtures.issuer) && text.contains("https://evil.example.test") && text.contains("issuer"))
  }

  @Test func onlyATrailingSlashDifferingIsSaid() async throws {
    let transport = OIDCFixtures.transport(document: OIDCFixtures.document(issuer: OIDCFixtures.issuer + "/"))
    let error = await #expect(throws: ConfigError.self) { try await OIDCFixtures.provider(transport).discovery.metadata() }
    let text = "\(String(describing: error))"
    #expect(text.contains("terminating '/'") && text.contains("'issuer = \(OIDCFixtures.issuer)/'"))
  }

  /// bug-cases-3 X02: Entra's `common` document names a `{tenantid}` template; both ways out are said.
  @Test func test_X02_entrasTemplateIssuerSaysBothWaysOut() async throws {
    let template = "https://login.example.test/{tenantid}/v2.0"
    let transport = OIDCFixtures.transport(document: OIDCFixtures.document(issuer: template))
    let error = await #expect(throws: ConfigError.self) { try await OIDCFixtures.provider(transport).discovery.metadata() }
    let text = "\(String(describing: error))"
    #expect(text.contains(template) && text.contains("'provider = azure'") && text.contains("'tenant = organizations'"))
    #expect(text.contains("'issuer = https://login.example.test/TENANT-ID/v2.0'"))
    #expect(OIDCFixtures.nonDiscovery(transport).isEmpty)
  }

  @Test func theRFC8414PlaceIsTriedWhenTheOIDCOneHasNone() async throws {
    let transport = FakeTransport { request, _ in
      request.url == OIDCFixtures.rfc8414URL ? HTTPResponse.json(OIDCFixtures.document()) : HTTPResponse(status: 404)
    }
    let metadata = try await OIDCFixtures.provider(transport).discovery.metadata()
    #expect(metadata.tokenEndpoint == OIDCFixtures.tokenURL)
    #expect(transport.requests.map(\.url) == [OIDCFixtures.discoveryURL, OIDCFixtures.rfc8414URL])
  }

  @Test func noDocumentAnywhereIsAConfigError() async throws {
    let transport = FakeTransport([.text("<html>not here</html>", status: 200), .text("<html>not here</html>", status: 200)])
    await #expect(throws: ConfigError.self) { try await OIDCFixtures.provider(transport).discovery.metadata() }
  }

  /// X06 step 5: discovery answered 200 HTML is exit 64 saying so, and nothing is cached (the
  /// next run fetches again).
  @Test func test_X06_anHTMLDiscoveryAnswerIsSaidAndNotCached() async throws {
    let cache = MemoryDiscoveryCache()
    let transport = FakeTransport { _, _ in
      HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/html")], body: Array("<html>portal</html>".utf8))
    }
    for run in 1...2 {
      let error = await #expect(throws: ConfigError.self) {
        try await OIDCFixtures.provider(transport, cache: cache).discovery.metadata()
      }
      let text = "\(String(describing: error))"
      #expect(text.contains("HTTP 200 with text/html, not JSON (HTML, a proxy?)"))
      #expect(text.contains(OIDCFixtures.issuer))
      #expect(transport.requests.count == 2 * run)
    }
  }

  @Test func anUnreachableOrFailingServerIsUnavailable() async throws {
    for reply in [FakeTransport.Reply.failure(.cannotConnect(host: "idp.example.test")), .text("", status: 503)] {
      let transport = FakeTransport([reply])
      let error = await #expect(throws: ProviderError.self) { try await OIDCFixtures.provider(transport).discovery.metadata() }
      guard case .unavailable(let host, _) = error else { Issue.record("\(String(describing: error))"); continue }
      #expect(host == "idp.example.test")
    }
  }

  @Test func aFreshCachedDocumentIsNotFetchedAgainAndAStaleOneIs() async throws {
    let cache = MemoryDiscoveryCache()
    let time = FakeTime(now: Fixtures.start)
    let transport = OIDCFixtures.transport()
    _ = try await OIDCFixtures.provider(transport, cache: cache, time: time).discovery.metadata()
    time.advance(by: 86000)
    _ = try await OIDCFixtures.provider(transport, cache: cache, time: time).discovery.metadata()
    #expect(transport.requests.count == 1)
    time.advance(by: 500)
    _ = try await OIDCFixtures.provider(transport, cache: cache, time: time).discovery.metadata()
    #expect(transport.requests.count == 2)
  }

  @Test func endpointKeysOverrideSingleEndpoints() async throws {
    var account = OIDCFixtures.account()
    account.endpoints.token = "https://other.example.test/token"
    let metadata = try await OIDCFixtures.provider(OIDCFixtures.transport(), account: account).discovery.metadata()
    #expect(metadata.tokenEndpoint == "https://other.example.test/token")
    #expect(metadata.authorizationEndpoint == OIDCFixtures.issuer + "/auth")
  }
}
