import BrokerCore
import Testing

@testable import BrokerProviders

/// B26: the redirect is bound to the sign-in by `state`; anything else is ignored.
@Suite struct AuthorizationRedirectTests {
  let state = "S-0123456789abcdefghijklmnopqrstuvwxyz"

  @Test func codeWithTheRightStateIsAccepted() {
    #expect(AuthorizationRedirect.check(query: "code=AC-1&state=\(state)", state: state) == .code(Secret("AC-1")))
    #expect(
      AuthorizationRedirect.check(query: "state=\(state)&code=a%2Fb%3D&session_state=x", state: state)
        == .code(Secret("a/b=")))
  }

  @Test(arguments: [
    "code=ATTACKER&state=WRONG", "code=ATTACKER", "", "state=", "code=X&state=S-0123456789abcdefghijklmnopqrstuvwxy",
    "code=X&state=S-0123456789abcdefghijklmnopqrstuvwxyz&state=S-0123456789abcdefghijklmnopqrstuvwxyz",
    "error=access_denied",
  ])
  func wrongMissingOrRepeatedStateIsForeign(_ query: String) {
    #expect(AuthorizationRedirect.check(query: query, state: state) == .foreign)
  }

  @Test func stateWithoutCodeOrWithTwoCodesIsIncomplete() {
    #expect(AuthorizationRedirect.check(query: "state=\(state)", state: state) == .incomplete)
    #expect(AuthorizationRedirect.check(query: "state=\(state)&code=", state: state) == .incomplete)
    #expect(AuthorizationRedirect.check(query: "state=\(state)&code=a&code=b", state: state) == .incomplete)
  }

  @Test func providerErrorsAreSanitised() {
    let query = "error=access_denied&error_description=AADSTS65004%3A+User+declined%0D%0A%1B%5B31mTrace&state=\(state)"
    guard case .error(let info) = AuthorizationRedirect.check(query: query, state: state) else {
      Issue.record("not an error")
      return
    }
    #expect(info.error == "access_denied")
    #expect(info.detail == "AADSTS65004: User declined")
    let odd = AuthorizationRedirect.check(query: "error=%3Cscript%3E&state=\(state)", state: state)
    #expect(odd == .error(AuthorizationErrorInfo(error: "unrecognised_error", detail: nil)))
  }

  @Test func pastedURLsAndQueries() {
    let url = "http://localhost:4242/?code=AC-2&state=\(state)#frag"
    #expect(AuthorizationRedirect.check(pasted: url, state: state) == .code(Secret("AC-2")))
    #expect(AuthorizationRedirect.check(pasted: "code=AC-3&state=\(state)", state: state) == .code(Secret("AC-3")))
    #expect(AuthorizationRedirect.check(pasted: "hello", state: state) == .foreign)
    #expect(AuthorizationRedirect.check(pasted: "http://localhost:4242/?code=AC&state=nope", state: state) == .foreign)
  }
}
