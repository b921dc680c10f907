@testable import BrokerCLI
import Testing

@Suite struct GitHelperChainTests {
  private func chain(_ entries: [(String?, String)], _ url: String) throws -> [String] {
    GitHelperChain(entries: entries.map { (pattern: $0.0, value: $0.1) }, url: try #require(URLParts(url))).helpers
  }

  @Test func collectsMatchingEntriesInOrderAndAnEmptyValueResets() throws {
    let entries: [(String?, String)] = [
      (nil, "cache"), ("https://git.example.test", ""), ("https://git.example.test", "tokenbroker"),
      ("https://other.example.test", "store"), ("git.example.test", "osxkeychain"), ("https://*.example.test", "wild"),
      ("https://git.example.test/team", "team"), ("https://git.example.test:8443", "port"), ("http://git.example.test", "plain"),
    ]
    #expect(try chain(entries, "https://git.example.test/repo") == ["tokenbroker", "osxkeychain", "wild"])
    #expect(try chain(entries, "https://git.example.test/team/repo") == ["tokenbroker", "osxkeychain", "wild", "team"])
    #expect(try chain(entries, "https://git.example.test/teamx") == ["tokenbroker", "osxkeychain", "wild"])
    #expect(try chain(entries, "https://git.example.test:8443/r") == ["cache", "port"])
    #expect(try chain(entries, "https://a.b.example.test/r") == ["cache"])
  }

  @Test func test_X14_warningsNameHelpersBeforeAndStorageHelpersAfter() throws {
    var c = GitHelperChain(entries: [], url: try #require(URLParts("https://h/")))
    c.helpers = ["cache --timeout 21600", "/usr/bin/git-credential-tokenbroker", "store", "!f() { echo; }; f"]
    let w = c.warnings(runs: { _ in true })
    #expect(w.count == 3)
    #expect(w[0].contains("'cache --timeout 21600' is asked before tokenbroker"))
    #expect(w[1].contains("'store' is asked after tokenbroker and keeps"))
    #expect(w[2].contains("when tokenbroker has no token"))
    c.helpers = ["store"]
    #expect(c.warnings() == ["git does not ask tokenbroker for this URL; run 'tokenbroker setup-git'"])
  }

  @Test func aHelperPathOfAMovedInstallIsNamed() throws {
    var c = GitHelperChain(entries: [], url: try #require(URLParts("https://h/")))
    c.helpers = ["/opt/gone/bin/git-credential-tokenbroker", "/usr/bin/other-helper"]
    let w = c.warnings(runs: { $0 != "/opt/gone/bin/git-credential-tokenbroker" })
    #expect(w.first?.hasPrefix("credential helper '/opt/gone/bin/git-credential-tokenbroker' is missing or not executable") == true)
    #expect(w.first?.hasSuffix("run 'tokenbroker setup-git'") == true)
    #expect(c.warnings(runs: { _ in true }).allSatisfy { !$0.contains("missing") })
  }

  @Test func urlParts() throws {
    let u = try #require(URLParts("https://me@Dev.Azure.com:8443/org%20x/p?q#f"))
    #expect(u.host == "dev.azure.com:8443" && u.user == "me" && u.path == "org x/p" && u.port == 8443)
    #expect(try #require(URLParts("https://h")).host == "h")
    #expect(URLParts("not a url") == nil)
  }
}
