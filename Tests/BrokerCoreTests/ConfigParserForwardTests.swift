import BrokerCore
import Testing

/// `[account] forward = yes | no` (interface.md §2.1, §8): off unless said.
@Suite struct ConfigParserForwardTests {
  @Test func forwardIsOffUnlessYes() throws {
    #expect(try ConfigParser.parse(raw([azure])).account(named: "work")?.forward == false)
    let yes = try ConfigParser.parse(raw([("account work", azure.1 + [("forward", "yes")])]))
    #expect(yes.account(named: "work")?.forward == true)
    #expect(yes.warnings.isEmpty)
    #expect(try ConfigParser.parse(raw([("account work", azure.1 + [("forward", "no")])])).account(named: "work")?.forward == false)
  }

  @Test func otherValuesAreConfigurationErrors() {
    #expect(throws: ConfigError.invalid(
      file: "/home/u/.config/tokenbroker/config", group: "account work", key: "forward", problem: "'true' is not one of yes or no")) {
      try ConfigParser.parse(raw([("account work", azure.1 + [("forward", "true")])]))
    }
  }
}
