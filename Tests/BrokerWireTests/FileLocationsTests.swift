import BrokerWire
import Testing

@Suite struct FileLocationsTests {
  func locations(_ env: [String: String]) -> FileLocations { FileLocations(environment: { env[$0] }) }

  @Test func theXDGVariablesWhenAbsoluteElseUnderHome() {
    let set = locations([
      "HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg", "XDG_DATA_HOME": "/data", "XDG_CACHE_HOME": "/cache",
    ])
    #expect(set.userConfigFile == "/cfg/tokenbroker/config")
    #expect(set.dataDirectory == "/data/tokenbroker")
    #expect(set.cacheDirectory == "/cache/tokenbroker")
    #expect(set.defaultConfigFiles == ["/etc/tokenbroker/config", "/cfg/tokenbroker/config"])
    // A relative or empty value counts as unset (XDG Base Directory Specification).
    let relative = locations(["HOME": "/home/u", "XDG_CONFIG_HOME": "cfg", "XDG_DATA_HOME": "", "XDG_CACHE_HOME": "~/c"])
    #expect(relative.userConfigFile == "/home/u/.config/tokenbroker/config")
    #expect(relative.dataDirectory == "/home/u/.local/share/tokenbroker")
    #expect(relative.cacheDirectory == "/home/u/.cache/tokenbroker")
  }

  @Test func noHomeIsTheRootAndAnEmptyExplicitFileIsNone() {
    #expect(locations([:]).userConfigFile == "//.config/tokenbroker/config")
    #expect(locations(["HOME": ""]).home == "/")
    #expect(locations(["TOKENBROKER_CONFIG": ""]).explicitConfigFile == nil)
    #expect(locations(["TOKENBROKER_CONFIG": "x.conf"]).explicitConfigFile == "x.conf")
  }
}
