import BrokerCore
import Testing

/// `client-auth` and public device clients (interface.md §2.1).
@Suite struct ConfigParserClientAuthTests {
  let google: [(String, String)] = [("provider", "google"), ("client-id", "cid"), ("client-secret", "sec")]

  @Test func clientAuthTakesTheRFC7591Names() throws {
    for method in ["client_secret_basic", "client_secret_post", "none"] {
      let c = try ConfigParser.parse(raw([("account g", google + [("client-auth", method)])]))
      #expect(c.account(named: "g")?.clientAuth?.rawValue == method)
    }
    #expect(try ConfigParser.parse(raw([("account g", google)])).account(named: "g")?.clientAuth == nil)
  }

  @Test func aBadClientAuthNamesTheKeyAndTheChoices() {
    #expect(throws: ConfigError.self) { try ConfigParser.parse(raw([("account g", google + [("client-auth", "basic")])])) }
    do {
      _ = try ConfigParser.parse(raw([("account g", google + [("client-auth", "basic")])]))
    } catch {
      #expect("\(error)".contains("client-auth") && "\(error)".contains("client_secret_basic"))
    }
  }

  @Test func anEmptyDeviceClientSecretMeansAPublicDeviceClient() throws {
    let c = try ConfigParser.parse(raw([("account g", google + [("device-client-id", "tv"), ("device-client-secret", "")])]))
    #expect(c.account(named: "g")?.deviceClientSecret == Secret(""))
  }

  @Test func caFilesAreTheBrokersThenEachAccounts() {
    var settings = BrokerSettings()
    settings.caFile = "/etc/a.pem"
    var one = AccountConfig(name: "one", provider: .azure)
    one.caFile = "/etc/b.pem"
    let two = AccountConfig(name: "two", provider: .azure)
    #expect(settings.caFiles(one, two) == ["/etc/a.pem", "/etc/b.pem"])
    #expect(BrokerSettings().caFiles(two).isEmpty)
  }
}
