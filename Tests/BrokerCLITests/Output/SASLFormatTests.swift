@testable import BrokerCLI
import Foundation
import Testing

/// `--format xoauth2 | oauthbearer`: the SASL initial responses, decoded back.
@Suite struct SASLFormatTests {
  func decoded(_ line: String) throws -> String {
    #expect(line.hasSuffix("\n") && !line.dropLast().contains("\n"))
    let data = try #require(Data(base64Encoded: String(line.dropLast())))
    return try #require(String(data: data, encoding: .utf8))
  }

  @Test func xoauth2IsUserAuthAndTwoSeparators() throws {
    let line = SASLFormat.render(.xoauth2, token: "tok.en", user: "alice@contoso.example", host: nil, port: nil)
    #expect(try decoded(line) == "user=alice@contoso.example\u{1}auth=Bearer tok.en\u{1}\u{1}")
  }

  @Test func oauthbearerFollowsRFC7628WithHostAndPortOnlyWhenGiven() throws {
    let full = SASLFormat.render(.oauthbearer, token: "t", user: "bob@x.test", host: "imap.x.test", port: 993)
    #expect(try decoded(full) == "n,a=bob@x.test,\u{1}host=imap.x.test\u{1}port=993\u{1}auth=Bearer t\u{1}\u{1}")
    let bare = SASLFormat.render(.oauthbearer, token: "t", user: "bob@x.test", host: nil, port: nil)
    #expect(try decoded(bare) == "n,a=bob@x.test,\u{1}auth=Bearer t\u{1}\u{1}")
    // RFC 5801's saslname: '=' and ',' are escaped in the authorization identity.
    let odd = SASLFormat.render(.oauthbearer, token: "t", user: "a=b,c", host: nil, port: nil)
    #expect(try decoded(odd).hasPrefix("n,a=a=3Db=2Cc,\u{1}"))
  }
}
