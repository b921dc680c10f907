import BrokerCore
import Testing

@testable import BrokerProviders

/// `SharePointSite` and `CookieImport.parse` (Netscape files, `Cookie:` lines).
@Suite struct CookieImportTests {
  static func site(_ origin: String = "https://contoso.sharepoint.com") throws -> SharePointSite {
    var a = AccountConfig(name: "sp", provider: .sharepoint)
    a.site = origin
    return try SharePointSite(account: a)
  }

  @Test func siteOriginScopeAndURLs() throws {
    let s = try Self.site("https://Contoso.SharePoint.com/")
    #expect(s.origin == "https://contoso.sharepoint.com")
    #expect(s.host == "contoso.sharepoint.com")
    #expect(s.scopes == ScopeSet(["https://contoso.sharepoint.com/.default"]))
    #expect(s.authenticateURL == "https://contoso.sharepoint.com/_api/SP.OAuth.NativeClient/Authenticate")
    #expect(s.webURL == "https://contoso.sharepoint.com/_api/web")
  }

  @Test(arguments: ["https://contoso.sharepoint.com/sites/x", "http://contoso.sharepoint.com", "ftp://x", "not a url"])
  func badSitesAreConfigErrors(origin: String) {
    #expect(throws: ConfigError.self) { try Self.site(origin) }
  }

  @Test func netscapeFileKeepsTheSitesCookies() throws {
    let text = """
      # Netscape HTTP Cookie File
      #HttpOnly_contoso.sharepoint.com\tFALSE\t/\tTRUE\t1800000000\tFedAuth\tF1
      #HttpOnly_.sharepoint.com\tTRUE\t/\tTRUE\t0\trtFa\tR1
      #HttpOnly_contoso-my.sharepoint.com\tFALSE\t/\tTRUE\t1800000000\tFedAuth\tOTHER
      fabrikam.sharepoint.com\tFALSE\t/\tTRUE\t1800000000\tFedAuth\tOTHER2

      """
    let cookies = CookieImport.parse(text, site: try Self.site(), fallbackExpiry: 42)
    #expect(cookies.map(\.name) == ["FedAuth", "rtFa"])
    #expect(cookies.map(\.value) == [Secret("F1"), Secret("R1")])
    #expect(cookies[0].domain == "contoso.sharepoint.com" && cookies[0].httpOnly && cookies[0].secure)
    #expect(cookies[0].expires == 1_800_000_000)
    #expect(cookies[1].domain == ".sharepoint.com")
    #expect(cookies[1].expires == 42)  // a session cookie gets cookie-lifetime
  }

  @Test(arguments: ["Cookie: FedAuth=F1; rtFa=R1\n", "FedAuth=F1;rtFa=R1", "cookie:FedAuth=F1; rtFa=R1; empty="])
  func cookieHeaderLine(line: String) throws {
    let cookies = CookieImport.parse(line, site: try Self.site(), fallbackExpiry: 42)
    #expect(cookies.map(\.name) == ["FedAuth", "rtFa"])
    #expect(cookies.allSatisfy { $0.domain == "contoso.sharepoint.com" && $0.expires == 42 && $0.secure })
  }

  @Test func nothingUsable() throws {
    #expect(CookieImport.parse("# only a comment\n\n", site: try Self.site(), fallbackExpiry: 1).isEmpty)
  }
}
