@testable import BrokerCLI
import BrokerCore
import Testing

/// Which accounts `exec` serves through which endpoint (interface.md §3, §9); the process side
/// runs in Tests/Integration/test_exec.py.
struct ExecAccountsTests {
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
    let gh = AccountConfig(name: "gh", provider: .github)
    let gh2 = AccountConfig(name: "gh2", provider: .github)
    c.accounts = [work, other, site, pasted, google, google2, gh, gh2]
    return c
  }

  @Test func aSharePointAccountServesThroughItsVia() throws {
    let (azure, google, _) = try ExecCommand.accounts(["intranet", "g"], config: Self.config(), usage: "u")
    #expect(azure == "work")
    #expect(google?.name == "g")
    #expect(try ExecCommand.accounts(["g"], config: Self.config(), usage: "u").azure == nil)
  }

  @Test func twoOfAKindOrNoAzureBehindItAreUsageErrors() {
    for (names, what) in [
      (["work", "other"], "two azure accounts"), (["work", "intranet"], "two azure accounts"),
      (["g", "g2"], "two google accounts"), (["pasted"], "no azure 'via' account"),
      (["gh", "gh2"], "two github accounts"),
    ] {
      #expect {
        try ExecCommand.accounts(names, config: Self.config(), usage: "u")
      } throws: { error in
        (error as? UsageError)?.message.contains(what) == true
      }
    }
    #expect(throws: ConfigError.self) { try ExecCommand.accounts(["nobody"], config: Self.config(), usage: "u") }
  }

  @Test func aGitHubAccountGivesGhItsOwnVariables() throws {
    let (azure, _, forge) = try ExecCommand.accounts(["work", "gh"], config: Self.config(), usage: "u")
    #expect(azure == "work")
    #expect(forge?.name == "gh")
    var account = AccountConfig(name: "gh", provider: .github)
    let token = Secret("ghu_T")
    #expect(ExecCommand.forgeVariables(account, token: token).map { "\($0.0)=\($0.1)" } == ["GH_TOKEN=ghu_T"])
    account.authority = "https://GHE.example.test:8443"
    #expect(ExecCommand.forgeVariables(account, token: token).map { "\($0.0)=\($0.1)" } == [
      "GH_ENTERPRISE_TOKEN=ghu_T", "GH_HOST=ghe.example.test:8443",
    ])
  }
}
