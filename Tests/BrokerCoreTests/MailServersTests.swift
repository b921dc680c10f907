import BrokerCore
import Testing

/// The providers' mail servers and `mail setup --imap | --smtp HOST[:PORT]`.
@Suite struct MailServersTests {
  @Test func providersServersByTenant() throws {
    let m365 = try #require(try ConfigParser.parse(raw([("account m", azure.1)])).account(named: "m"))
    #expect(MailServers.server(for: .imap, account: m365) == MailServer(host: "outlook.office365.com", port: 993, implicitTLS: true))
    #expect(MailServers.server(for: .smtp, account: m365) == MailServer(host: "smtp.office365.com", port: 587, implicitTLS: false))
    let personal = try #require(try ConfigParser.parse(raw([("account m", azure.1 + [("tenant", "consumers")])])).account(named: "m"))
    #expect(MailServers.server(for: .smtp, account: personal)?.host == "smtp-mail.outlook.com")
    let oidc = try #require(try ConfigParser.parse(raw([("account m", MailScopesTests.oidc)])).account(named: "m"))
    #expect(MailServers.server(for: .imap, account: oidc) == nil)
  }

  @Test func hostAndPortWithTheProtocolsUsualTLS() {
    #expect(MailServer("mail.example.test", for: .imap) == MailServer(host: "mail.example.test", port: 993, implicitTLS: true))
    #expect(MailServer("mail.example.test:143", for: .imap)?.implicitTLS == false)
    #expect(MailServer("127.0.0.1:2525", for: .smtp) == MailServer(host: "127.0.0.1", port: 2525, implicitTLS: false))
    #expect(MailServer("smtp.example.test:465", for: .smtp)?.implicitTLS == true)
    #expect(MailServer("[::1]", for: .pop) == MailServer(host: "[::1]", port: 995, implicitTLS: true))
    #expect(MailServer("host:0", for: .imap) == nil)
    #expect(MailServer("", for: .imap) == nil)
    #expect(MailServer("a b", for: .imap) == nil)
  }
}
