@testable import BrokerCLI
import Testing

@Suite struct BrokerCommandTests {
  @Test(arguments: [["--help"], ["token", "get", "--help"], ["login", "--help"], ["get", "--help"], ["accounts", "-h"]])
  func helpGoesToStdoutWithExitZero(args: [String]) async throws {
    let h = try CLIHarness()
    #expect(await h.run(args) == 0)
    #expect(h.stdout.hasPrefix("usage: tokenbroker"))
    #expect(h.stderr.isEmpty)
  }

  @Test(arguments: [
    ["frobnicate"], ["token"], ["token", "put", "work"], ["token", "get"], ["token", "get", "a", "b"],
    ["token", "get", "work", "--format", "xml"], ["token", "get", "work", "--min-valid", "-3"], ["logout"],
    ["login", "work", "--device-code", "--browser"], ["--config"], ["accounts", "--bogus"],
    ["token", "get", "work", "--for", "imaps"], ["token", "get", "work", "--for", "imap", "--scope", "s"],
    ["token", "get", "work", "--user", "u"], ["token", "get", "work", "--format", "xoauth2", "--host", "h"],
    ["token", "get", "work", "--format", "oauthbearer", "--port", "x"],
    ["token", "get", "work", "--for", "smtp", "--format", "exec-credential"],
  ])
  func usageErrorsExit64WithErrorAndUsage(args: [String]) async throws {
    let h = try CLIHarness(config: fileStoreConfig)
    #expect(await h.run(args) == 64)
    #expect(h.stderr.hasPrefix("error: "))
    #expect(h.stderr.contains("usage: tokenbroker"))
    #expect(h.stdout.isEmpty)
  }

  @Test func noCommandPrintsUsageAndExits64() async throws {
    let h = try CLIHarness()
    #expect(await h.run([]) == 64)
    #expect(h.stderr.contains("usage:"))
  }

  @Test func configErrorsExit64NamingFileGroupAndKey() async throws {
    let h = try CLIHarness(config: "[broker]\nrefresh-margin = soon\n")
    #expect(await h.run(["token", "get", "work"]) == 64)
    #expect(h.stderr.contains("[broker] refresh-margin"))
    #expect(h.stderr.contains("/config/tokenbroker/config"))
    #expect(h.stderr.hasPrefix("tokenbroker: "))
  }

  @Test func unknownAccountIsAConfigError() async throws {
    let h = try CLIHarness(config: fileStoreConfig)
    #expect(await h.run(["token", "get", "nobody"]) == 64)
    #expect(h.stderr.contains("no account 'nobody'"))
  }

  @Test func notSignedInExits3NamingLogin() async throws {
    let h = try CLIHarness(config: fileStoreConfig)
    #expect(await h.run(["token", "get", "work"]) == 3)
    #expect(h.stderr.contains("tokenbroker login work"))
    #expect(h.stdout.isEmpty)
  }

  @Test func globalOptionsMayComeAnywhere() throws {
    var args = ["token", "--verbose", "get", "--config=/x", "work"]
    let g = try GlobalOptions.extract(from: &args)
    #expect(g.verbose && g.configFile == "/x")
    #expect(args == ["token", "get", "work"])
  }
}
