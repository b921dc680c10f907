import BrokerCore
import Testing

/// `[host HOST] registry = acr` (interface.md §2.1, §5).
@Suite struct ConfigParserRegistryTests {
  @Test func registryParsesOnHostGroupsAndDefaultsToNone() throws {
    let c = try ConfigParser.parse(raw([azure, ("host reg.example.test:5000", [("account", "work"), ("registry", "acr")])]))
    #expect(c.hosts.first?.registry == .acr)
    #expect(c.warnings.isEmpty)
    let plain = try ConfigParser.parse(raw([azure, ("host reg.example.test", [("account", "work")])]))
    #expect(plain.hosts.first?.registry == nil)
  }

  @Test func otherValuesAndNonAzureAccountsAreConfigurationErrors() {
    #expect(throws: ConfigError.invalid(
      file: "/home/u/.config/tokenbroker/config", group: "host reg.example.test", key: "registry",
      problem: "'ecr' is not one of acr")) {
      try ConfigParser.parse(raw([azure, ("host reg.example.test", [("account", "work"), ("registry", "ecr")])]))
    }
    let google = ("account g", [("provider", "google"), ("client-id", "gid"), ("client-secret", "s")])
    #expect(throws: ConfigError.self) {
      try ConfigParser.parse(raw([google, ("host reg.example.test", [("account", "g"), ("registry", "acr")])]))
    }
  }
}
