@testable import BrokerCLI
import BrokerCore
import BrokerProviders
import Testing

@Suite struct TokenFormatTests {
  let token = IssuedToken(
    account: "work", provider: .azure, tokenType: "Bearer", accessToken: Secret("AT-1"), expiresOn: 1_795_970_549,
    scopes: ["a", "b"], identity: "u@x")

  @Test func formats() {
    #expect(TokenFormat.token.render(token) == "AT-1\n")
    #expect(TokenFormat.header.render(token) == "Authorization: Bearer AT-1\n")
    #expect(TokenFormat.env.render(token) == "TOKENBROKER_ACCESS_TOKEN=AT-1\nTOKENBROKER_EXPIRES_ON=1795970549\n")
    // A token is the server's text: a shell word for eval, quoted where it needs it.
    #expect(TokenFormat.shellWord("eyJ0.a-b_c+d/e==") == "eyJ0.a-b_c+d/e==")
    #expect(TokenFormat.shellWord("x$(touch y)`z`") == "'x$(touch y)`z`'")
    #expect(TokenFormat.shellWord("it's ~") == "'it'\\''s ~'")
    #expect(
      TokenFormat.json.render(token)
        == #"{"access_token":"AT-1","account":"work","expires_on":1795970549,"provider":"azure","scopes":["a","b"],"token_type":"Bearer"}"# + "\n")
    #expect(
      TokenFormat.execCredential.render(token)
        == #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"expirationTimestamp":"2026-11-29T16:42:29Z","token":"AT-1"}}"# + "\n")
  }

  @Test(arguments: [
    (Int64(0), "1970-01-01T00:00:00Z"), (951_782_400, "2000-02-29T00:00:00Z"), (4_102_444_799, "2099-12-31T23:59:59Z"),
  ])
  func rfc3339(t: Int64, expected: String) { #expect(RFC3339.utc(t) == expected) }

  @Test func terminalTextDropsControlCharacters() {
    #expect(TerminalText.clean("a\u{1b}[31mb\u{7}c\u{9b}d\te") == "a[31mbcde")
  }
}
