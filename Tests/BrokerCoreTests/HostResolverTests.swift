import BrokerCore
import Testing

@Suite struct HostResolverTests {
  private func config(_ groups: [(String, [(String, String)])]) throws -> BrokerConfig { try ConfigParser.parse(raw(groups)) }

  @Test func precedenceHostGroupThenExactThenLongestPattern() throws {
    let c = try config([
      ("account a", [("provider", "azure"), ("client-id", "1"), ("hosts", "*.example.com exact.example.com")]),
      ("account b", [("provider", "azure"), ("client-id", "2"), ("hosts", "*.dev.example.com"), ("git-username", "bee")]),
      ("host pinned.dev.example.com", [("account", "a"), ("username", "pin"), ("scopes", "s1 s2")]),
    ])
    let r = try HostResolver(config: c)
    #expect(r.resolve(host: "exact.example.com")?.account.name == "a")
    #expect(r.resolve(host: "x.dev.example.com")?.account.name == "b")
    #expect(r.resolve(host: "x.dev.example.com")?.username == "bee")
    #expect(r.resolve(host: "y.example.com")?.account.name == "a")
    let pinned = try #require(r.resolve(host: "PINNED.dev.example.com"))
    #expect(pinned.account.name == "a" && pinned.username == "pin" && pinned.scopes == ["s1", "s2"])
  }

  @Test func patternsMatchWholeLabelsAndPorts() throws {
    let c = try config([("account a", [("provider", "azure"), ("client-id", "1"), ("hosts", "*.example.com git.test:8443")])])
    let r = try HostResolver(config: c)
    #expect(r.resolve(host: "example.com") == nil)
    #expect(r.resolve(host: "badexample.com") == nil)
    #expect(r.resolve(host: "a.b.example.com")?.account.name == "a")
    #expect(r.resolve(host: "a.example.com:444") == nil)
    #expect(r.resolve(host: "git.test") == nil)
    #expect(r.resolve(host: "git.test:8443")?.account.name == "a")
    #expect(r.resolve(host: "") == nil)
  }

  @Test func twoAccountsClaimingOneHostIsAConfigError() {
    #expect(throws: ConfigError.self) {
      try config([
        ("account a", [("provider", "azure"), ("client-id", "1"), ("hosts", "git.test")]),
        ("account b", [("provider", "azure"), ("client-id", "2"), ("hosts", "GIT.test")]),
      ])
    }
    #expect(throws: ConfigError.self) {
      try config([
        ("account a", [("provider", "azure"), ("client-id", "1"), ("hosts", "*.test")]),
        ("account b", [("provider", "azure"), ("client-id", "2"), ("hosts", "*.test")]),
      ])
    }
  }

  @Test func badHostEntriesAreRefused() {
    for bad in ["a/b", "host:99999", "*.", "-.", "a_b.com\u{1b}"] {
      #expect(throws: ConfigError.self) {
        try config([("account a", [("provider", "azure"), ("client-id", "1"), ("hosts", bad)])])
      }
    }
  }
}

/// `[host HOST/PATH]` groups (interface.md §2.1; bug-cases-3.md X13).
@Suite struct HostResolverPathTests {
  private func config(_ groups: [(String, [(String, String)])]) throws -> BrokerConfig { try ConfigParser.parse(raw(groups)) }
  private static let accounts: [(String, [(String, String)])] = [
    ("account work", [("provider", "azure"), ("client-id", "1"), ("hosts", "git.test")]),
    ("account other", [("provider", "azure"), ("client-id", "2"), ("git-username", "o")]),
    ("account deep", [("provider", "azure"), ("client-id", "3")]),
  ]

  @Test func test_X13_longestPathPrefixInWholeSegmentsThenHostGroup() throws {
    let r = try HostResolver(
      config: config(
        Self.accounts + [
          ("host dev.azure.com", [("account", "work")]),
          ("host dev.azure.com/org2", [("account", "other"), ("scopes", "s/.default")]),
          ("host dev.azure.com/org2/secret", [("account", "deep")]),
        ]))
    #expect(r.resolve(host: "dev.azure.com", path: "org2/p/_git/r")?.account.name == "other")
    #expect(r.resolve(host: "dev.azure.com", path: "org2/p/_git/r")?.scopes == ["s/.default"])
    #expect(r.resolve(host: "dev.azure.com", path: "org2/p/_git/r")?.rule == "[host dev.azure.com/org2]")
    #expect(r.resolve(host: "dev.azure.com", path: "org2")?.account.name == "other")
    #expect(r.resolve(host: "dev.azure.com", path: "org2/secret/_git/x")?.account.name == "deep")
    #expect(r.resolve(host: "dev.azure.com", path: "org1/p/_git/r")?.account.name == "work")
    // Whole segments only: org22 is not under org2.
    #expect(r.resolve(host: "dev.azure.com", path: "org22/p")?.account.name == "work")
    // No path: never a path group.
    #expect(r.resolve(host: "dev.azure.com")?.account.name == "work")
    #expect(r.resolve(host: "dev.azure.com", path: nil)?.rule == "[host dev.azure.com]")
    #expect(r.hasPathGroups(host: "DEV.azure.com") && !r.hasPathGroups(host: "git.test"))
    #expect(r.accounts(servingHost: "dev.azure.com").map(\.name) == ["other", "deep", "work"])
  }

  @Test func test_X13_azureDevOpsPathsIgnoreCaseOthersDoNot() throws {
    let r = try HostResolver(
      config: config(
        Self.accounts + [
          ("host dev.azure.com/Contoso", [("account", "other")]),
          ("host contoso.visualstudio.com/DefaultCollection", [("account", "other")]),
          ("host git.example/Team", [("account", "other")]),
        ]))
    #expect(r.resolve(host: "dev.azure.com", path: "contoso/p/_git/r")?.account.name == "other")
    #expect(r.resolve(host: "contoso.visualstudio.com", path: "defaultcollection/p")?.account.name == "other")
    #expect(r.resolve(host: "git.example", path: "Team/r")?.account.name == "other")
    #expect(r.resolve(host: "git.example", path: "team/r") == nil)
    // Only path groups serve dev.azure.com: a request without a path is no one's.
    #expect(r.resolve(host: "dev.azure.com") == nil)
  }

  @Test func test_X13_twoGroupsForOnePathAreAConfigError() {
    #expect(throws: ConfigError.self) {
      try config(Self.accounts + [("host dev.azure.com/org", [("account", "work")]), ("host dev.azure.com/ORG/", [("account", "other")])])
    }
    #expect(throws: ConfigError.self) {
      try config(Self.accounts + [("host dev.azure.com/org", [("account", "work")]), ("host dev.azure.com//org", [("account", "other")])])
    }
    // Elsewhere paths are exact, so these are two paths.
    #expect(throws: Never.self) {
      try config(Self.accounts + [("host git.example/org", [("account", "work")]), ("host git.example/ORG", [("account", "other")])])
    }
  }

  @Test func badPathsAndPathsInHostsAreRefused() {
    for bad in ["host dev.azure.com/", "host dev.azure.com/a/../b", "host dev.azure.com/a b", "host dev.azure.com/a?b", "host dev.azure.com/a%20b"] {
      #expect(throws: ConfigError.self, "\(bad)") { try config(Self.accounts + [(bad, [("account", "work")])]) }
    }
    do {
      _ = try config([("account a", [("provider", "azure"), ("client-id", "1"), ("hosts", "dev.azure.com/org")])])
      Issue.record("a path in hosts was accepted")
    } catch {
      #expect("\(error)".contains("[host dev.azure.com/org]"))
    }
  }

  @Test func pathGroupWithUnknownAccountNamesTheGroup() {
    do {
      _ = try config(Self.accounts + [("host dev.azure.com/org", [("account", "nobody")])])
      Issue.record("accepted")
    } catch {
      #expect("\(error)".contains("[host dev.azure.com/org] account"))
    }
  }
}

/// Which registry a host is (interface.md §2.1 `registry`) and the scopes an ACR exchange takes.
@Suite struct HostResolverRegistryTests {
  @Test func azurecrHostsAreACRAndAskForTheRegistryScopeUnlessTheGroupNamesScopes() throws {
    let c = try ConfigParser.parse(raw([
      ("account a", [("provider", "azure"), ("client-id", "1"), ("hosts", "*.azurecr.io git.example.test"), ("scopes", "s1")]),
      ("host pinned.azurecr.io", [("account", "a"), ("scopes", "r1 r2")]),
      ("host reg.example.test:5000", [("account", "a"), ("registry", "acr")]),
    ]))
    let r = try HostResolver(config: c)
    let mine = try #require(r.resolve(host: "MyReg.azurecr.io"))
    #expect(mine.registry == .acr && mine.scopes == [RegistryKind.acrScope])
    let pinned = try #require(r.resolve(host: "pinned.azurecr.io"))
    #expect(pinned.registry == .acr && pinned.scopes == ["r1", "r2"])
    let local = try #require(r.resolve(host: "reg.example.test:5000"))
    #expect(local.registry == .acr && local.scopes == [RegistryKind.acrScope])
    let git = try #require(r.resolve(host: "git.example.test"))
    #expect(git.registry == nil && git.scopes == ["s1"])
  }
}
