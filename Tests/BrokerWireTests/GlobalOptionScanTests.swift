import BrokerWire
import Testing

@Suite struct GlobalOptionScanTests {
  @Test func globalOptionsAnywhereBeforeTheDashes() {
    let s = GlobalOptionScan(["token", "--verbose", "get", "--config", "a.ini", "w", "--config=b.ini", "--", "--verbose", "--config", "x"])
    #expect(s.configFile == "b.ini")
    #expect(s.verbose)
    #expect(s.words == ["token", "get", "w", "--", "--verbose", "--config", "x"])
    #expect(s.withoutConfig == ["token", "--verbose", "get", "w", "--", "--verbose", "--config", "x"])
    #expect(!s.missingConfigValue)
  }

  @Test func aConfigWithoutItsValue() {
    let s = GlobalOptionScan(["get", "--config"])
    #expect(s.missingConfigValue)
    #expect(GlobalOptionScan(["--config", "--verbose"]).configFile == "--verbose")
    #expect(GlobalOptionScan(["--config="]).configFile == "")
    #expect(GlobalOptionScan(["--configure"]).words == ["--configure"])
  }
}
