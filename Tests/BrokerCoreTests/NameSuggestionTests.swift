import BrokerCore
import Foundation
import Testing

@Suite struct NameSuggestionTests {
  @Test func caseAndUnderscoreSpellingsMatch() {
    #expect(NameSuggestion.closest(to: "client_id", among: ConfigKeys.account) == "client-id")
    #expect(NameSuggestion.closest(to: "Client-ID", among: ConfigKeys.account) == "client-id")
  }

  @Test func typosWithinTheDistanceMatch() {
    #expect(NameSuggestion.closest(to: "stroe", among: ConfigKeys.broker) == "store")  // a swap counts 1
    #expect(NameSuggestion.closest(to: "wrok", among: ["work", "personal"]) == "work")
    #expect(NameSuggestion.closest(to: "tennant", among: ConfigKeys.account) == "tenant")
    #expect(NameSuggestion.closest(to: "scope", among: ConfigKeys.account) == "scopes")
  }

  @Test func farNamesAndExactNamesGetNothing() {
    #expect(NameSuggestion.closest(to: "colour", among: ConfigKeys.broker) == nil)
    #expect(NameSuggestion.closest(to: "ab", among: ["work"]) == nil)
    #expect(NameSuggestion.closest(to: "store", among: ConfigKeys.broker) == nil)
    #expect(NameSuggestion.closest(to: "x", among: [String]()) == nil)
  }

  @Test func theStartOfExactlyOneLongerNameMatches() {
    #expect(NameSuggestion.closest(to: "--device", among: ["--device-code", "--browser", "--scope"]) == "--device-code")
    #expect(NameSuggestion.closest(to: "--dev", among: ["--device-code", "--developer"]) == nil)  // two start so
    #expect(NameSuggestion.closest(to: "dev", among: ["device-code"]) == nil)  // too short to guess
    #expect(NameSuggestion.closest(to: "store", among: ["store", "store-path"]) == nil)  // a known name
  }

  @Test func theClosestWins() {
    #expect(NameSuggestion.closest(to: "flw", among: ["flow", "floww2"]) == "flow")
  }
}

@Suite struct ConfigKeysTests {
  @Test func everyListedKeyIsOneTheParserKnows() throws {
    let values: [String: String] = [
      "provider": "oidc", "client-auth": "client_secret_basic", "flow": "browser", "redirect-port": "8400",
      "authority": "https://login.example.com", "issuer": "https://login.example.com", "ca-file": "/etc/ssl/ca.pem",
      "site": "https://contoso.sharepoint.com", "mode": "bearer", "cookie-lifetime": "60", "kube-token": "id",
      "hosts": "git.example.com", "project-number": "123456789012", "forward": "yes",
      "mail": "imap smtp",
    ]
    let endpoint = "https://login.example.com/x"
    let account = ConfigKeys.account.map { key in
      (key, values[key] ?? (key.hasSuffix("endpoint") ? endpoint : "one"))
    }
    let broker: [(String, String)] = ConfigKeys.broker.map { key in
      switch key {
      case "store": (key, "secret-service")
      case "agent": (key, "auto")
      case "notify": (key, "off")
      case "ca-file": (key, "/etc/ssl/ca.pem")
      case "browser": (key, "firefox")
      default: (key, "30")
      }
    }
    let c = try ConfigParser.parse(
      raw([
        ("broker", broker), ("account a", account), ("account z", [("provider", "azure"), ("client-id", "1")]),
        // `registry = acr` takes an azure account.
        ("host h.example.com", ConfigKeys.host.map { ($0, $0 == "registry" ? "acr" : $0 == "account" ? "z" : "a") }),
      ]))
    #expect(c.warnings.isEmpty, "\(c.warnings)")
  }

  /// The lists and tokenbroker-config(5) name the same keys: a key added to the parser and the man
  /// page but not here would be refused by `account add` (which checks its options against the list).
  @Test func theListsNameTheKeysTheManPageDocuments() throws {
    let man = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../man/tokenbroker-config.5")
    let text = try String(contentsOf: man, encoding: .utf8)
    var documented = Set<String>()
    for line in text.split(separator: "\n") where line.hasPrefix(".It Cm ") {
      let words = line.split(separator: " ").map(String.init)
      for (i, w) in words.enumerated() where w == "Cm" && i + 1 < words.count && (i < 2 || words[i - 1] == ",") {
        documented.insert(words[i + 1])
      }
    }
    #expect(
      documented == Set(ConfigKeys.broker + ConfigKeys.account + ConfigKeys.host),
      "a key in tokenbroker-config(5) and the parser must be listed in Sources/BrokerCore/ConfigKeys.swift too")
  }

  @Test func anUnknownKeyNamesTheKnownOneItLooksLike() throws {
    let c = try ConfigParser.parse(raw([("broker", [("stroe", "encrypted-file")]), azure]))
    #expect(c.warnings == [
      "/home/u/.config/tokenbroker/config: [broker] stroe: unknown key, ignored (did you mean 'store'?)"
    ])
  }

  @Test func aMissingKeyNamesTheMisspeltKeyThatStandsForIt() {
    let typo = raw([("account work", [("provider", "azure"), ("client_id", "cid")])])
    #expect {
      try ConfigParser.parse(typo)
    } throws: { error in
      "\(error)".contains("client-id: missing; the group has 'client_id': write it as 'client-id'")
    }
  }
}
