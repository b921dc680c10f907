import BrokerCore
import Testing

@testable import BrokerProviders

/// `SetCookie.parse` and `HTTPDate.parse` (RFC 6265 §5.2, RFC 9110 §5.6.7).
@Suite struct SetCookieTests {
  @Test func spoidcrlWithAttributes() throws {
    let c = try #require(
      SetCookie.parse(
        "SPOIDCRL=abc=def; expires=Sun, 06 Nov 1994 08:49:37 GMT; path=/; secure; HttpOnly", defaultDomain: "contoso.sharepoint.com",
        now: 0))
    #expect(c.name == "SPOIDCRL")
    #expect(c.value == Secret("abc=def"))
    #expect(c.domain == "contoso.sharepoint.com")
    #expect(c.path == "/")
    #expect(c.expires == 784_111_777)
    #expect(c.secure && c.httpOnly)
  }

  @Test func maxAgeWinsOverExpiresAndDomainLosesItsDot() throws {
    let c = try #require(
      SetCookie.parse("rtFa=x; Domain=.SharePoint.com; Max-Age=60; Expires=Sun, 06-Nov-1994 08:49:37 GMT", defaultDomain: "h", now: 1000))
    #expect(c.expires == 1060)
    #expect(c.domain == "sharepoint.com")
    #expect(!c.secure && !c.httpOnly)
  }

  @Test(arguments: ["", "noequals", "=value; path=/"])
  func withoutAPairNothing(header: String) {
    #expect(SetCookie.parse(header, defaultDomain: "h", now: 0) == nil)
  }

  @Test func httpDates() {
    #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
    #expect(HTTPDate.parse("Sat, 29 Feb 2028 23:59:59 GMT") == 1_835_481_599)
    #expect(HTTPDate.parse("Sun, 29 Nov 26 18:00:00 GMT") == 1_795_975_200)
    #expect(HTTPDate.parse("yesterday") == nil)
    #expect(HTTPDate.parse("Sun, 32 Nov 2026 18:00:00 GMT") == nil)
  }

  /// A Max-Age too large for the clock is bounded, not added to it.
  @Test func maxAgeBeyondTheClockIsBounded() throws {
    let c = try #require(SetCookie.parse("a=b; Max-Age=9223372036854775807", defaultDomain: "x.example", now: 1_800_000_000))
    #expect(c.expires == 1_800_000_000 + OutsideTime.limit)
  }
}
