import BrokerCore
import Testing

@testable import BrokerProviders

@Suite struct DeviceAuthorizationReplyTests {
  func parse(_ json: String) throws(ProviderError) -> DeviceAuthorization {
    try DeviceAuthorizationReply.parse(Array(json.utf8), now: 500, host: "login.example.test")
  }

  @Test func keepsTheServersStringsVerbatim() throws {
    let a = try parse(#"{"device_code":"DC","user_code":"AB\u001b[2JCD","verification_uri":"https://microsoft.com/devicelogin","expires_in":"600","interval":"7","message":"hi"}"#)
    #expect(a.deviceCode == Secret("DC"))
    #expect(a.userCode == "AB\u{1b}[2JCD")
    #expect(a.expiresIn == 600)
    #expect(a.interval == 7)
    #expect(a.message == "hi")
    #expect(a.issuedAt == 500)
    #expect(a.verificationURIComplete == nil)
  }

  @Test func defaultsAndGooglesSpelling() throws {
    let a = try parse(#"{"device_code":"DC","user_code":"U","verification_url":"https://www.google.com/device","interval":0}"#)
    #expect(a.verificationURI == "https://www.google.com/device")
    #expect(a.interval == 5)
    #expect(a.expiresIn == 900)
  }

  @Test(arguments: ["<html/>", #"{"user_code":"U","verification_uri":"https://x"}"#, #"{"device_code":"D","verification_uri":"https://x"}"#, #"{"device_code":"D","user_code":"U"}"#])
  func incompleteRepliesAreUnavailable(_ body: String) {
    #expect(throws: ProviderError.self) { try parse(body) }
  }
}
