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
