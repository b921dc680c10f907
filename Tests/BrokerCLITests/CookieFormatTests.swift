@testable import BrokerCLI
import BrokerCore
import BrokerProviders
import Testing

/// `CookieFormat`: token, header, json and cookiejar renderings of cookies (interface.md §3,
/// protocols.md §7.4).
@Suite struct CookieFormatTests {
  let cookies = IssuedCookies(
    account: "sp", site: "https://contoso.sharepoint.com",
    cookies: [
      StoredCookie(name: "FedAuth", value: Secret("F1"), domain: "contoso.sharepoint.com", expires: 1_800_000_000),
      StoredCookie(name: "rtFa", value: Secret("R1"), domain: ".sharepoint.com", path: "/", expires: 0, httpOnly: false, secure: true),
    ], expiresOn: 1_800_000_000)

  @Test func tokenAndHeader() throws {
    #expect(try CookieFormat.render(.token, cookies, usage: "u") == "FedAuth=F1; rtFa=R1\n")
    #expect(try CookieFormat.render(.header, cookies, usage: "u") == "Cookie: FedAuth=F1; rtFa=R1\n")
  }

  @Test func json() throws {
    let text = try CookieFormat.render(.json, cookies, usage: "u")
    #expect(text.hasPrefix(#"{"account":"sp","cookies":[{"domain":"contoso.sharepoint.com","expires":1800000000,"http_only":true,"name":"FedAuth","path":"/","secure":true,"value":"F1"}"#))
    #expect(text.hasSuffix(#""expires_on":1800000000,"provider":"sharepoint","token_type":"cookies"}"# + "\n"))
  }

  @Test func cookiejar() throws {
    let lines = try CookieFormat.render(.cookiejar, cookies, usage: "u").split(separator: "\n").map(String.init)
    #expect(lines[0] == "# Netscape HTTP Cookie File")
    #expect(lines.contains("#HttpOnly_contoso.sharepoint.com\tFALSE\t/\tTRUE\t1800000000\tFedAuth\tF1"))
    #expect(lines.contains(".sharepoint.com\tTRUE\t/\tTRUE\t0\trtFa\tR1"))
  }

  @Test(arguments: [TokenFormat.env, .execCredential])
  func bearerOnlyFormatsAreUsageErrors(format: TokenFormat) {
    #expect(throws: UsageError.self) { try CookieFormat.render(format, cookies, usage: "u") }
  }
}
