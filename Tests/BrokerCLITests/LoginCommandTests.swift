import BrokerCore
import BrokerProviders
import BrokerSystem
import Testing

@testable import BrokerCLI

/// `login`'s choices that need no keyring or provider: which flow, and what the loopback
/// listener answers (the flows themselves run in Tests/Integration/test_browser_login.py).
@Suite struct LoginCommandTests {
  @Test(arguments: [
    ([:], false), (["DISPLAY": ":0"], true), (["WAYLAND_DISPLAY": "wayland-0"], true),
    (["DISPLAY": ":0", "SSH_CONNECTION": "10.0.0.1 22 10.0.0.2 22"], false), (["DISPLAY": ":0", "SSH_TTY": "/dev/pts/1"], false),
    (["DISPLAY": ""], false),
  ] as [([String: String], Bool)])
  func aDisplayIsPresentOnlyOutsideSSH(_ environment: [String: String], _ expected: Bool) {
    #expect(LoginCommand.hasDisplay(environment) == expected)
  }

  @Test func flagsWinOverTheAccountAndTheDisplay() throws {
    var account = AccountConfig(name: "w", provider: .azure)
    let display = ["DISPLAY": ":0"]
    func flow(_ args: [String], _ env: [String: String] = [:]) throws -> LoginFlow {
      LoginCommand.chooseFlow(try Arguments(args, valued: [], flags: ["device-code", "browser", "no-open"], usage: ""), account: account, environment: env)
    }
    #expect(try flow([]) == .deviceCode)
    #expect(try flow([], display) == .browser)
    #expect(try flow(["--device-code"], display) == .deviceCode)
    #expect(try flow(["--no-open"]) == .browser)
    account.flow = .deviceCode
    #expect(try flow([], display) == .deviceCode)
    #expect(try flow(["--browser"]) == .browser)
  }

  @Test func githubSignsInWithTheDeviceCodeEvenWithADisplay() throws {
    var account = AccountConfig(name: "gh", provider: .github)
    func flow(_ args: [String]) throws -> LoginFlow {
      LoginCommand.chooseFlow(
        try Arguments(args, valued: [], flags: ["device-code", "browser", "no-open"], usage: ""), account: account,
        environment: ["DISPLAY": ":0"])
    }
    #expect(try flow([]) == .deviceCode)
    #expect(try flow(["--browser"]) == .browser)
    account.flow = .browser
    #expect(try flow([]) == .browser)
  }

  @Test func theListenerAnswersOnlyTheRedirectOfThisSignIn() {
    let context = ProcessContext(
      environment: [:], uid: 0, readInput: { _ in [] }, writeOutput: { _ in }, writeError: { _ in }, isInteractive: false)
    func reply(_ method: String, _ path: String, _ query: String) -> LoopbackReply<RedirectVerdict> {
      BrowserLogin.reply(
        to: LoopbackRequest(method: method, path: path, query: query, host: nil), state: "S1", account: "w",
        context: context, verbose: false)
    }
    #expect(reply("GET", "/favicon.ico", "").status == 404)
    #expect(reply("POST", "/", "code=A&state=S1").status == 405)
    #expect(reply("GET", "/", "code=A&state=S2").status == 400)
    #expect(reply("GET", "/", "code=A&state=S2").result == nil)
    #expect(reply("GET", "/", "state=S1").status == 400)
    let good = reply("GET", "/", "code=A&state=S1")
    #expect(good.status == 200)
    #expect(good.result == .code(Secret("A")))
    let declined = reply("GET", "/", "error=access_denied&state=S1")
    #expect(declined.result == .error(AuthorizationErrorInfo(error: "access_denied", detail: nil)))
    #expect(declined.page.contains("did not complete"))
  }
}
