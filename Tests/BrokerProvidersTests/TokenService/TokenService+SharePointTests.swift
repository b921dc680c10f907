import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// SharePoint accounts in `TokenService`: bearer (`sharePointBearer`), cookie mode
/// (`cookies`, renewal, `erase`), imported cookies (`importCookies`, B28).
@Suite struct TokenServiceSharePointTests {
  static let site = "https://contoso.sharepoint.com"
  static let siteScopes = ScopeSet([site + "/.default"])

  static func config() -> BrokerConfig {
    var c = Fixtures.config()
    for (name, mode) in [("spb", SharePointMode.bearer), ("spc", .cookie), ("spi", .importedCookies)] {
      var a = AccountConfig(name: name, provider: .sharepoint)
      a.site = site
      a.via = mode == .importedCookies ? nil : "work"
      a.mode = mode
      a.cookieLifetime = 600
      c.accounts.append(a)
    }
    return c
  }

  static func cookieReply(_ value: String, maxAge: Int = 3600) -> FakeTransport.Reply {
    .json("{}", headers: [HTTPHeader("Set-Cookie", "SPOIDCRL=\(value); Max-Age=\(maxAge); path=/; secure; HttpOnly")])
  }

  @Test func bearerIsTheViaAccountsTokenForTheSite() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT-SITE", rt: nil)], config: Self.config())
    try await h.store.putRefreshToken("RT1")
    let t = try await h.service.accessToken(account: "spb", scopes: nil, minValid: nil, forceRefresh: false)
    #expect(t.accessToken == Secret("AT-SITE"))
    #expect((t.account, t.provider) == ("spb", .sharepoint))
    #expect(t.scopes == [Self.site + "/.default"])
    #expect(h.transport.requests[0].formFields["scope"]?.contains(Self.site + "/.default") == true)
    // Cached under the via account, per site: the second call needs no request.
    _ = try await h.service.accessToken(account: "spb", scopes: nil, minValid: nil, forceRefresh: false)
    #expect(h.transport.requests.count == 1)
    #expect(try await h.store.accessRecord(Self.siteScopes)?.accessToken == Secret("AT-SITE"))
    #expect(try await h.service.eraseHandedOut(account: "spb", token: Secret("AT-SITE")))
    #expect(try await h.store.accessRecord(Self.siteScopes) == nil)
  }

  @Test func bearerWithoutViaSignInNamesVia() async {
    let h = Harness([], config: Self.config())
    await #expect(throws: ProviderError.signInRequired(account: "work", reason: ProviderError.notSignedIn)) {
      _ = try await h.service.accessToken(account: "spb", scopes: nil, minValid: nil, forceRefresh: false)
    }
  }

  @Test func cookieModeExchangesCachesAndRenews() async throws {
    let h = Harness(
      [
        Fixtures.tokenReply(at: "AT-SITE", rt: nil), Self.cookieReply("C1"), Self.cookieReply("C2"),
        Fixtures.tokenReply(at: "AT-SITE2", rt: nil), Self.cookieReply("C3"),
      ],
      config: Self.config())
    try await h.store.putRefreshToken("RT1")
    let first = try await h.service.cookies(account: "spc", forceRefresh: false)
    #expect(first.pairs == "SPOIDCRL=C1")
    #expect(first.expiresOn == Fixtures.start + 600)  // cookie-lifetime
    let exchange = h.transport.requests[1]
    #expect(exchange.method == "POST" && exchange.url == Self.site + "/_api/SP.OAuth.NativeClient/Authenticate")
    #expect(exchange.headers.contains(HTTPHeader("Authorization", "Bearer AT-SITE")))
    #expect(try await h.service.cookies(account: "spc", forceRefresh: false).pairs == "SPOIDCRL=C1")
    h.time.advance(by: 600)
    #expect(try await h.service.cookies(account: "spc", forceRefresh: false).pairs == "SPOIDCRL=C2")
    #expect(try await h.service.cookies(account: "spc", forceRefresh: true).pairs == "SPOIDCRL=C3")
    // --force-refresh renews the whole chain: the site token too.
    #expect(h.transport.requests.count == 5)
    #expect(h.transport.requests[4].headers.contains(HTTPHeader("Authorization", "Bearer AT-SITE2")))
  }

  @Test func aCachedSiteTokenTheSiteRefusesIsDroppedAndRefreshedOnce() async throws {
    let h = Harness(
      [
        Fixtures.tokenReply(at: "AT1", rt: nil), Self.cookieReply("C1"), .json("{}", status: 401),
        Fixtures.tokenReply(at: "AT2", rt: nil), Self.cookieReply("C2"),
      ], config: Self.config())
    try await h.store.putRefreshToken("RT1")
    _ = try await h.service.cookies(account: "spc", forceRefresh: false)
    h.time.advance(by: 600)  // the cookie is due; the site token (3600 s) is still cached
    let earlier = await h.store.log.count
    #expect(try await h.service.cookies(account: "spc", forceRefresh: false).pairs == "SPOIDCRL=C2")
    // The site token is read once per attempt (and once more under the refresh lock) and the
    // refused one erased by its key: nothing is listed.
    let calls = await h.store.log.dropFirst(earlier)
    let siteToken = ItemKey.accessToken("work", Self.siteScopes)
    #expect(calls.filter { $0 == "load \(siteToken)" }.count == 3)
    #expect(calls.filter { $0 == "delete \(siteToken)" }.count == 1)
    #expect(!calls.contains { $0.hasPrefix("keys ") })
    #expect(h.transport.requests.count == 5)  // exactly one retry
    #expect(h.transport.requests[2].headers.contains(HTTPHeader("Authorization", "Bearer AT1")))
    #expect(h.transport.requests[4].headers.contains(HTTPHeader("Authorization", "Bearer AT2")))
    #expect(try await h.store.accessRecord(Self.siteScopes)?.accessToken == Secret("AT2"))
    #expect(try await h.store.load(.refreshToken("work")) != nil)
  }

  @Test func aFreshSiteTokenRefusedAsWellIsReportedAndNothingDeleted() async throws {
    let h = Harness(
      [
        Fixtures.tokenReply(at: "AT1", rt: nil), Self.cookieReply("C1"), .json("{}", status: 401),
        Fixtures.tokenReply(at: "AT2", rt: nil), .json("{}", status: 401),
      ], config: Self.config())
    try await h.store.putRefreshToken("RT1")
    _ = try await h.service.cookies(account: "spc", forceRefresh: false)
    h.time.advance(by: 600)
    await #expect {
      _ = try await h.service.cookies(account: "spc", forceRefresh: false)
    } throws: { error in
      guard case ProviderError.rejected(let account, _, let detail) = error else { return false }
      return account == "spc" && detail.contains("freshly refreshed") && !"\(error)".contains("\n")
    }
    #expect(h.transport.requests.count == 5)  // no second retry
    #expect(try await h.store.load(.refreshToken("work")) != nil)
    #expect(try await h.store.load(ItemKey(account: "spc", kind: .cookies)) != nil)
  }

  @Test func eraseOfTheCookieDropsIt() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT-SITE", rt: nil), Self.cookieReply("C1"), Self.cookieReply("C2")], config: Self.config())
    try await h.store.putRefreshToken("RT1")
    _ = try await h.service.cookies(account: "spc", forceRefresh: false)
    #expect(!(try await h.service.eraseHandedOut(account: "spc", token: Secret("other"))))
    #expect(try await h.service.eraseHandedOut(account: "spc", token: Secret("C1")))
    #expect(try await h.service.cookies(account: "spc", forceRefresh: false).pairs == "SPOIDCRL=C2")
  }

  @Test func aCookieExpiringSoonerThanTheLifetimeIsRenewedBeforeItsExpiry() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT", rt: nil), Self.cookieReply("C1", maxAge: 400)], config: Self.config())
    try await h.store.putRefreshToken("RT1")
    #expect(try await h.service.cookies(account: "spc", forceRefresh: false).expiresOn == Fixtures.start + 100)
  }

  @Test(arguments: [401, 403])
  func siteRefusingTheTokenIsRejected(status: Int) async throws {
    // A 401 is retried only for a cached token; this one was just refreshed.
    let h = Harness([Fixtures.tokenReply(at: "AT", rt: nil), .json("{}", status: status)], config: Self.config())
    try await h.store.putRefreshToken("RT1")
    await #expect {
      _ = try await h.service.cookies(account: "spc", forceRefresh: false)
    } throws: { error in
      guard case ProviderError.rejected(let account, _, _) = error else { return false }
      return account == "spc"
    }
  }

  @Test func anExchangeWithoutSpoidcrlIsUnavailable() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT", rt: nil), .json("{}")], config: Self.config())
    try await h.store.putRefreshToken("RT1")
    await #expect {
      _ = try await h.service.cookies(account: "spc", forceRefresh: false)
    } throws: { error in
      if case ProviderError.unavailable = error { return true } else { return false }
    }
  }

  @Test func cookiesNeverOutliveTheViaSignIn() async throws {
    let h = Harness([Fixtures.tokenReply(at: "AT", rt: nil), Self.cookieReply("C1")], config: Self.config())
    try await h.store.putRefreshToken("RT1")
    _ = try await h.service.cookies(account: "spc", forceRefresh: false)
    try await h.store.delete(.refreshToken("work"))
    await #expect(throws: ProviderError.signInRequired(account: "work", reason: ProviderError.notSignedIn)) {
      _ = try await h.service.cookies(account: "spc", forceRefresh: false)
    }
    #expect(try await h.store.load(ItemKey(account: "spc", kind: .cookies)) == nil)
  }

  // MARK: imported cookies (B28)

  @Test func importChecksStoresWarnsAndExpires() async throws {
    let h = Harness([.json(#"{"d":{}}"#)], config: Self.config())
    let expiry = Fixtures.start + 86400 + 100
    let file = "#HttpOnly_contoso.sharepoint.com\tFALSE\t/\tTRUE\t\(expiry)\tFedAuth\tF1\n"
      + "#HttpOnly_contoso.sharepoint.com\tFALSE\t/\tTRUE\t\(expiry)\trtFa\tR1\n"
    let imported = try await h.service.importCookies(account: "spi", text: file)
    #expect(imported.expiresOn == expiry)
    let check = h.transport.requests[0]
    #expect(check.method == "GET" && check.url == Self.site + "/_api/web")
    #expect(check.headers.contains(HTTPHeader("Cookie", "FedAuth=F1; rtFa=R1")))
    #expect(check.headers.contains(HTTPHeader("Accept", "application/json;odata=verbose")))

    let fresh = try await h.service.cookies(account: "spi", forceRefresh: false)
    #expect(fresh.pairs == "FedAuth=F1; rtFa=R1")
    #expect(fresh.warning == nil)
    h.time.advance(by: 200)  // less than a day left
    let warned = try await h.service.cookies(account: "spi", forceRefresh: true)
    #expect(warned.warning?.contains("tokenbroker login spi") == true)
    #expect(warned.warning?.contains("F1") == false)
    h.time.advance(by: 86400)
    await #expect {
      _ = try await h.service.cookies(account: "spi", forceRefresh: false)
    } throws: { error in
      guard case ProviderError.signInRequired(let account, let reason) = error else { return false }
      return account == "spi" && reason.contains("expired") && !reason.contains("F1")
    }
    #expect(h.transport.requests.count == 1)  // never renewed silently
  }

  @Test func aCookieLineGetsTheCookieLifetime() async throws {
    let h = Harness([.json("{}")], config: Self.config())
    let imported = try await h.service.importCookies(account: "spi", text: "Cookie: FedAuth=F1; rtFa=R1")
    #expect(imported.expiresOn == Fixtures.start + 600)
  }

  @Test(arguments: [401, 403])
  func refusedCookiesAreNotStored(status: Int) async throws {
    let h = Harness([.json("{}", status: status)], config: Self.config())
    await #expect {
      _ = try await h.service.importCookies(account: "spi", text: "FedAuth=F1; rtFa=R1")
    } throws: { error in
      if case ProviderError.loginFailed = error { return true } else { return false }
    }
    #expect(try await h.store.load(ItemKey(account: "spi", kind: .cookies)) == nil)
  }

  @Test func inputWithoutFedAuthAndRtFaIsRefusedWithoutARequest() async throws {
    let h = Harness([], config: Self.config())
    await #expect {
      _ = try await h.service.importCookies(account: "spi", text: "Cookie: other=1")
    } throws: { error in
      if case ProviderError.loginFailed = error { return true } else { return false }
    }
    #expect(h.transport.requests.isEmpty)
  }

  @Test func notImportedIsNotSignedIn() async {
    let h = Harness([], config: Self.config())
    await #expect(throws: ProviderError.signInRequired(account: "spi", reason: ProviderError.notSignedIn)) {
      _ = try await h.service.cookies(account: "spi", forceRefresh: false)
    }
  }

  @Test func modesAreKeptApart() async {
    let h = Harness([], config: Self.config())
    await #expect(throws: ProviderError.self) { _ = try await h.service.cookies(account: "spb", forceRefresh: false) }
    await #expect(throws: ProviderError.self) {
      _ = try await h.service.accessToken(account: "spc", scopes: nil, minValid: nil, forceRefresh: false)
    }
    await #expect(throws: ProviderError.self) { _ = try await h.service.importCookies(account: "spc", text: "FedAuth=1; rtFa=2") }
  }
}
