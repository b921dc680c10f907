import BrokerCore
import Testing

@testable import BrokerProviders

/// What of a provider's or proxy's text may be shown (bug-cases.md B29, bug-cases-3.md X06).
@Suite struct RedactionTests {
  /// X06 step 1: a proxy's page becomes one line of its text: no tags, no control characters (so
  /// no terminal escapes act), no secret of the request, no token-like run, 160 characters at most.
  @Test func test_X06_aBodyLineIsItsTextWithoutTagsControlsOrSecrets() {
    let page = "<html>\r\n<head><title>Zscaler</title></head>\r\n<body>\u{1B}[2J\u{07}<h1>Blocked</h1>\n"
      + "<p>refresh_token=RT-SENTINEL-42 and \(String(repeating: "x", count: 50))</p>"
      + String(repeating: " lorem", count: 100) + "</body></html>"
    let line = Redaction.bodyLine(Array(page.utf8), redacting: ["RT-SENTINEL-42"])
    #expect(line.hasPrefix("Zscaler [2J Blocked refresh_token=<redacted> and <redacted> lorem lorem"))
    #expect(line.count <= 161 && line.hasSuffix("…"))
    #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    #expect(!line.contains("<html") && !line.contains("RT-SENTINEL"))
  }

  /// A page that echoes the form body shows the secret percent-encoded: redacted in that form too
  /// (its pieces between escapes are too short to look like a token).
  @Test func aSecretEchoedPercentEncodedIsRedacted() {
    let secret = "0.AX4A+b/c=d&e f"
    let page = "<p>you posted refresh_token=\(FormEncoding.escape(secret))&grant_type=refresh_token</p>"
    let line = Redaction.bodyLine(Array(page.utf8), redacting: [secret])
    #expect(line == "you posted refresh_token=<redacted>&grant_type=refresh_token", "\(line)")
  }

  @Test func invalidUTF8IsReplacedNotFatal() {
    #expect(Redaction.bodyLine([0x3C, 0x62, 0x3E, 0xFF, 0x41], redacting: []) == "\u{FFFD}A")
  }
}
