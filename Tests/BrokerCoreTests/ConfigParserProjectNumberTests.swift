import BrokerCore
import Testing

/// `[account] project-number` and `resource-manager-endpoint` (interface.md §2.1; bug-cases-3.md X10).
@Suite struct ConfigParserProjectNumberTests {
  let google: [(String, String)] = [("provider", "google"), ("client-id", "c"), ("client-secret", "s"), ("project", "demo")]

  @Test func test_X10_projectNumberIsDigitsAndTheLookupEndpointDefaultsToGoogles() throws {
    let plain = try ConfigParser.parse(raw([("account g", google)])).account(named: "g")
    #expect(plain?.projectNumber == nil)
    #expect(plain?.resourceManagerEndpoint == "https://cloudresourcemanager.googleapis.com")
    let c = try ConfigParser.parse(
      raw([("account g", google + [("project-number", "314159265358"), ("resource-manager-endpoint", "http://127.0.0.1:9/rm/")])]))
    #expect(c.warnings.isEmpty)
    #expect(c.account(named: "g")?.projectNumber == "314159265358")
    #expect(c.account(named: "g")?.resourceManagerEndpoint == "http://127.0.0.1:9/rm")
  }

  @Test func test_X10_aProjectNumberThatIsNotDigitsOrAnHTTPLookupIsAConfigurationError() {
    for bad in ["demo-proj", "12 34", "-1", "12345678901234567890"] {
      #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("account g", google + [("project-number", bad)])])) }
    }
    #expect(throws: ConfigError.self) {
      try ConfigParser.parse(raw([("account g", google + [("resource-manager-endpoint", "http://rm.example.test")])]))
    }
  }
}
