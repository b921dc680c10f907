import BrokerCore
import Testing

/// `[account] kube-token = access | id` (interface.md §2.1; bug-cases-3.md X08).
@Suite struct ConfigParserKubeTokenTests {
  let oidc: [(String, String)] = [("provider", "oidc"), ("issuer", "https://idp.example.test"), ("client-id", "kube")]

  @Test func test_X08_kubeTokenParsesForOIDCAndDefaultsToAccess() throws {
    #expect(try ConfigParser.parse(raw([("account kube", oidc)])).account(named: "kube")?.kubeToken == .access)
    let c = try ConfigParser.parse(raw([("account kube", oidc + [("kube-token", "id")])]))
    #expect(c.account(named: "kube")?.kubeToken == .id)
    #expect(c.warnings.isEmpty)
    #expect(try ConfigParser.parse(raw([("account kube", oidc + [("kube-token", "access")])])).account(named: "kube")?.kubeToken == .access)
  }

  @Test func test_X08_otherValuesAndIDOnOtherProvidersAreConfigurationErrors() {
    #expect(throws: ConfigError.invalid(
      file: "/home/u/.config/tokenbroker/config", group: "account kube", key: "kube-token",
      problem: "'id-token' is not one of access or id")) {
      try ConfigParser.parse(raw([("account kube", oidc + [("kube-token", "id-token")])]))
    }
    #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("account work", azure.1 + [("kube-token", "id")])])) }
    #expect((try? ConfigParser.parse(raw([("account work", azure.1 + [("kube-token", "access")])]))) != nil)
  }
}
