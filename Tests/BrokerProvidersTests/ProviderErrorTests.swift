import Testing

@testable import BrokerProviders

/// Every message is one line: what failed; what to do (interface.md §6).
@Suite struct ProviderErrorTests {
  @Test(arguments: [
    (ProviderError.signInRequired(account: "work", reason: "not signed in"),
     "'work' is not signed in; run 'tokenbroker login work'"),
    (.signInRequired(account: "work", reason: "the refresh token was rejected (invalid_grant, AADSTS50173)"),
     "sign-in needed for 'work': the refresh token was rejected (invalid_grant, AADSTS50173); run 'tokenbroker login work'"),
    (.declined(account: "work"), "the sign-in to 'work' was declined; run 'tokenbroker login work' again and approve it"),
    (.deviceCodeExpired(account: "work"),
     "the device code for 'work' expired before the sign-in was approved; run 'tokenbroker login work' again and enter the new code sooner"),
    (.loginTimedOut(account: "work", seconds: 300),
     "the sign-in to 'work' did not complete within 300 s; run 'tokenbroker login work' again, or raise login-timeout in [broker]"),
    (.unavailable(host: "login.microsoftonline.com", detail: "HTTP 503 after 3 attempts; try again later"),
     "the identity provider 'login.microsoftonline.com' could not be used: HTTP 503 after 3 attempts; try again later"),
    (.rejected(account: "work", error: "invalid_scope", detail: "check the scopes of the account (or --scope) (AADSTS70011)"),
     "the identity provider rejected the request for 'work' (invalid_scope); check the scopes of the account (or --scope) (AADSTS70011)"),
    (.unsupported("google accounts are not implemented yet; use azure"), "google accounts are not implemented yet; use azure"),
  ])
  func descriptions(error: ProviderError, expected: String) {
    #expect(error.description == expected)
    #expect(!error.description.contains("\n"))
    #expect(error.description.contains("; "))
  }
}
