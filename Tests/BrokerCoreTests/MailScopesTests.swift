import BrokerCore
import Testing

/// `token get --for`'s scopes and `[account] mail`, `mail-scopes` (README, "Mail clients").
@Suite struct MailScopesTests {
  static let google: [(String, String)] = [("provider", "google"), ("client-id", "g"), ("client-secret", "s")]
  static let oidc: [(String, String)] = [("provider", "oidc"), ("issuer", "https://idp.example.test"), ("client-id", "c")]

  func account(_ entries: [(String, String)]) throws -> AccountConfig {
    try #require(try ConfigParser.parse(raw([("account m", entries)])).account(named: "m"))
  }

  @Test func azureAsksExchangeOnlinesScopeOfEachProtocolInTheMailKey() throws {
    let plain = try account(azure.1)
    #expect(try MailScopes.scopes(for: .imap, account: plain).items == ["https://outlook.office.com/IMAP.AccessAsUser.All"])
    #expect(try MailScopes.scopes(for: .pop, account: plain).items == ["https://outlook.office.com/POP.AccessAsUser.All"])
    #expect(try MailScopes.scopes(for: .smtp, account: plain).items == ["https://outlook.office.com/SMTP.Send"])
    // One token for IMAP and SMTP: both ask the same scope set, so they share a cache entry and a refresh.
    let both = try account(azure.1 + [("mail", "smtp imap")])
    #expect(both.mail == [.smtp, .imap])
    let imap = try MailScopes.scopes(for: .imap, account: both)
    #expect(imap == (try MailScopes.scopes(for: .smtp, account: both)))
    #expect(Set(imap.items) == ["https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send"])
    #expect(try MailScopes.scopes(for: .pop, account: both).items.count == 3)
  }

  @Test func googleAsksGmailsOneScopeAndOIDCItsMailScopes() throws {
    #expect(try MailScopes.scopes(for: .smtp, account: account(Self.google)).items == ["https://mail.google.com/"])
    let oidc = try account(Self.oidc + [("mail-scopes", "mail offline_access")])
    #expect(Set(try MailScopes.scopes(for: .imap, account: oidc).items) == ["mail", "offline_access"])
    #expect(throws: ConfigError.accountKey("m", "mail-scopes", "not set; list the scopes the mail server accepts (e.g. mail-scopes = mail)")) {
      try MailScopes.scopes(for: .imap, account: try account(Self.oidc))
    }
  }

  @Test func badProtocolsAndSharePointAreConfigurationErrors() throws {
    #expect(throws: ConfigError.invalid(
      file: "/home/u/.config/tokenbroker/config", group: "account m", key: "mail",
      problem: "'imaps' is not one of imap, pop or smtp, space separated")) {
      try ConfigParser.parse(raw([("account m", azure.1 + [("mail", "imap imaps")])]))
    }
    let sharepoint: [(String, String)] = [("provider", "sharepoint"), ("site", "https://c.sharepoint.com"), ("via", "w")]
    #expect(throws: ConfigError.self) {
      try ConfigParser.parse(raw([("account w", azure.1), ("account m", sharepoint + [("mail", "imap")])]))
    }
    #expect(try ConfigParser.parse(raw([("account m", azure.1 + [("mail", "imap")])])).warnings.isEmpty)
  }
}
