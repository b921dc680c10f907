import BrokerCore
import Testing

func raw(_ groups: [(String, [(String, String)])], file: String = "/home/u/.config/tokenbroker/config") -> RawConfig {
  RawConfig(
    groups: groups.map { g in
      RawConfig.Group(name: g.0, file: file, entries: g.1.map { RawConfig.Entry(key: $0.0, value: $0.1, file: file) })
    })
}

let azure: (String, [(String, String)]) = (
  "account work", [("provider", "azure"), ("client-id", "cid"), ("tenant", "contoso.onmicrosoft.com")]
)

@Suite struct ConfigParserTests {
  @Test func defaults() throws {
    let c = try ConfigParser.parse(raw([azure]))
    #expect(c.settings == BrokerSettings())
    let a = try #require(c.account(named: "work"))
    #expect(a.scopes == ["https://graph.microsoft.com/.default"])
    #expect(a.authority == "https://login.microsoftonline.com")
    #expect(a.tenant == "contoso.onmicrosoft.com")
  }

  @Test func interfaceExampleParses() throws {
    let c = try ConfigParser.parse(
      raw([
        ("broker", [("store", "secret-service"), ("agent", "auto")]),
        ("account work", [
          ("provider", "azure"), ("tenant", "contoso.onmicrosoft.com"), ("client-id", "11111111-2222-3333-4444-555555555555"),
          ("scopes", "https://graph.microsoft.com/User.Read  https://graph.microsoft.com/Calendars.ReadWrite"),
        ]),
        ("host dev.azure.com", [("account", "work"), ("scopes", "499b84ac-1321-427f-aa17-267ca6975798/.default")]),
        ("account personal", [
          ("provider", "google"), ("client-id", "1234-abc.apps.googleusercontent.com"), ("client-secret", "GOCSPX-example"),
          ("scopes", "openid email https://www.googleapis.com/auth/cloud-platform"), ("hosts", "europe-west1-docker.pkg.dev"),
          ("git-username", "oauth2accesstoken"),
        ]),
        ("account intranet", [("provider", "sharepoint"), ("site", "https://contoso.sharepoint.com"), ("via", "work"), ("mode", "bearer")]),
      ]))
    #expect(c.accounts.map(\.name) == ["work", "personal", "intranet"])
    #expect(c.account(named: "work")?.scopes.count == 2)
    #expect(c.hosts.first?.host == "dev.azure.com")
    #expect(c.warnings.isEmpty)
  }

  @Test func badValuesNameFileGroupAndKey() {
    #expect(throws: ConfigError.invalid(
      file: "/home/u/.config/tokenbroker/config", group: "broker", key: "store",
      problem: "'keychain' is not one of secret-service, encrypted-file or file")) {
      try ConfigParser.parse(raw([("broker", [("store", "keychain")])]))
    }
    #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("broker", [("refresh-margin", "5m")])])) }
    #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("account x", [("provider", "azure")])])) }
    #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("account x", [("client-id", "c")])])) }
    #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("account x", [("provider", "okta")])])) }
    #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("host a.example", [("account", "nobody")])])) }
  }

  @Test func httpOnlyForLoopback() throws {
    #expect(throws: ConfigError.self) {
      try ConfigParser.parse(raw([("account work", azure.1 + [("authority", "http://login.example.com")])]))
    }
    for ok in ["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9", "https://login.example.com"] {
      let c = try ConfigParser.parse(raw([("account work", azure.1 + [("authority", ok)])]))
      #expect(c.account(named: "work")?.authority == ok)
    }
    #expect(throws: ConfigError.self) {
      try ConfigParser.parse(raw([("account work", azure.1 + [("authority", "https://login.example.com/tenant")])]))
    }
  }

  @Test func unknownKeysAndGroupsWarn() throws {
    let c = try ConfigParser.parse(raw([("broker", [("stor", "file")]), ("acount x", [])]))
    #expect(c.warnings.count == 2)
    #expect(c.warnings[0].contains("[broker] stor"))
  }

  @Test func mergeIsKeyByKey() {
    let etc = raw([("broker", [("store", "file"), ("refresh-margin", "60")])], file: "/etc/tokenbroker/config")
    let user = raw([("broker", [("store", "secret-service")])])
    let merged = etc.merged(with: user)
    #expect(merged.groups[0].entries.map(\.value) == ["secret-service", "60"])
    #expect(merged.groups[0].entries[1].file == "/etc/tokenbroker/config")
  }

  @Test func sharepointNeedsAnAzureVia() {
    #expect(throws: ConfigError.self) {
      try ConfigParser.parse(raw([azure, ("account sp", [("provider", "sharepoint"), ("site", "https://c.sharepoint.com"), ("via", "nobody")])]))
    }
  }
}

@Suite struct EncryptedStoreConfigTests {
  @Test func encryptedFileAndUnlockTimeoutParse() throws {
    let c = try ConfigParser.parse(raw([("broker", [("store", "encrypted-file"), ("unlock-timeout", "600")]), azure]))
    #expect(c.settings.store == .encryptedFile)
    #expect(c.settings.unlockTimeout == 600)
    #expect(try ConfigParser.parse(raw([azure])).settings.unlockTimeout == 28800)
    #expect(try ConfigParser.parse(raw([("broker", [("unlock-timeout", "0")])])).settings.unlockTimeout == 0)
  }

  /// Only the agent holds the key: without it the store cannot be used at all (exit 64).
  @Test func encryptedFileWithoutTheAgentIsAConfigurationError() {
    let error = #expect(throws: ConfigError.self) {
      try ConfigParser.parse(raw([("broker", [("store", "encrypted-file"), ("agent", "off")]), azure]))
    }
    let text = error.map { String(describing: $0) } ?? ""
    #expect(text.contains("store"))
    #expect(text.contains("agent = auto"))
    #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("broker", [("unlock-timeout", "-1")])])) }
  }
}
