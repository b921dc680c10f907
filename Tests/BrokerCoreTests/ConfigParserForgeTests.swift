import BrokerCore
import Testing

/// The github preset's defaults (interface.md §2.2): authority, scopes, hosts, git username,
/// REST base.
@Suite struct ConfigParserForgeTests {
  let github: [(String, String)] = [("provider", "github"), ("client-id", "Iv1.app")]

  @Test func githubDefaultsToGitHubComItsGistHostAndTheTokenUsername() throws {
    let c = try ConfigParser.parse(raw([("account gh", github)]))
    let a = try #require(c.account(named: "gh"))
    #expect(a.authority == "https://github.com")
    #expect(a.scopes == ["repo", "gist", "workflow"])
    #expect(a.hosts == ["github.com", "gist.github.com"])
    #expect(a.gitUsername == "x-access-token")
    #expect(a.apiEndpoint == nil)
    #expect(c.warnings.isEmpty)
    let r = try HostResolver(config: c)
    #expect(r.resolve(host: "github.com")?.username == "x-access-token")
    #expect(r.resolve(host: "gist.github.com")?.account.name == "gh")
  }

  @Test func anEnterpriseServerClaimsItsOwnHostAndHostsCanClaimNone() throws {
    let ghes = github + [("authority", "https://ghe.example.test"), ("api-endpoint", "https://ghe.example.test/api/v3/")]
    let a = try #require(try ConfigParser.parse(raw([("account e", ghes)])).account(named: "e"))
    #expect(a.hosts == ["ghe.example.test"])
    #expect(a.apiEndpoint == "https://ghe.example.test/api/v3")
    let none = try ConfigParser.parse(raw([("account e", ghes + [("hosts", "")])]))
    #expect(none.account(named: "e")?.hosts == [])
    let named = try ConfigParser.parse(raw([("account e", ghes + [("git-username", "me")])]))
    #expect(named.account(named: "e")?.gitUsername == "me")
  }

  @Test func twoAccountsOfOneForgeHostAreAConflictNamingThePathGroupFix() {
    #expect {
      try ConfigParser.parse(raw([("account a", github), ("account b", github)]))
    } throws: { error in
      let text = (error as? ConfigError)?.description ?? ""
      return text.contains("[account a] and [account b]") && text.contains("[host github.com/ORG] with account = NAME")
        && text.contains("hosts = claims none")
    }
    #expect((try? ConfigParser.parse(raw([("account a", github), ("account b", github + [("hosts", "")])]))) != nil)
  }

  @Test func aClientIDIsRequired() {
    #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("account gh", [("provider", "github")])])) }
  }
}
