@testable import BrokerCLI
import BrokerCore
import BrokerSystem
import Synchronization
import Testing

/// Which accounts `exec` serves through which endpoint (interface.md §3, §9); the process side
/// runs in Tests/Integration/test_exec.py.
struct ExecCommandTests {
  static func config() -> BrokerConfig {
    var c = BrokerConfig()
    var work = AccountConfig(name: "work", provider: .azure)
    work.clientID = "c"
    var other = AccountConfig(name: "other", provider: .azure)
    other.clientID = "c2"
    var site = AccountConfig(name: "intranet", provider: .sharepoint)
    site.via = "work"
    var pasted = AccountConfig(name: "pasted", provider: .sharepoint)
    pasted.mode = .importedCookies
    let google = AccountConfig(name: "g", provider: .google)
    let google2 = AccountConfig(name: "g2", provider: .google)
    c.accounts = [work, other, site, pasted, google, google2]
    return c
  }

  @Test func aSharePointAccountServesThroughItsVia() throws {
    let (azure, google) = try ExecCommand.accounts(["intranet", "g"], config: Self.config(), usage: "u")
    #expect(azure == "work")
    #expect(google?.name == "g")
    #expect(try ExecCommand.accounts(["g"], config: Self.config(), usage: "u").azure == nil)
  }

  @Test func twoOfAKindOrNoAzureBehindItAreUsageErrors() {
    for (names, what) in [
      (["work", "other"], "two azure accounts"), (["work", "intranet"], "two azure accounts"),
      (["g", "g2"], "two google accounts"), (["pasted"], "no azure 'via' account"),
    ] {
      #expect {
        try ExecCommand.accounts(names, config: Self.config(), usage: "u")
      } throws: { error in
        (error as? UsageError)?.message.contains(what) == true
      }
    }
    #expect(throws: ConfigError.self) { try ExecCommand.accounts(["nobody"], config: Self.config(), usage: "u") }
  }

  /// A failing endpoint server is named on stderr in one line; COMMAND runs on and its status is
  /// exec's (the error used to be dropped with the task group's child).
  @Test func anEndpointThatFailsIsNamedAndCommandRunsOn() async throws {
    let stderr = Mutex("")
    let context = ProcessContext(
      environment: ["PATH": "/usr/bin:/bin"], uid: 0, readInput: { _ in [] }, writeOutput: { _ in },
      writeError: { s in stderr.withLock { $0 += s } }, isInteractive: false)
    let failing = ExecCommand.Endpoint(
      name: "Azure managed identity",
      serve: {
        throw SystemError.listener(what: "the SDK credential endpoint failed (Bad file descriptor)", remedy: "run the command again")
      }, stop: {})
    let status = try await ExecCommand.serve(
      [failing], command: ["sh", "-c", "exit 7"], environment: ["PATH": "/usr/bin:/bin"],
      runtime: Runtime(context: context, globals: GlobalOptions()))
    #expect(status == 7)
    #expect(stderr.withLock { $0 } == "tokenbroker: the SDK credential endpoint failed (Bad file descriptor); run the command again\n")
  }
}
