@testable import BrokerCLI
import BrokerCore
import BrokerStore
import Foundation
import Testing

@Suite struct AccountCommandTests {
  static let config = """
    # my settings
    [broker]
    store = file

    # the work account
    [account work]
    provider = azure
    client-id = cid

    [host dev.example.test]
    account = work
    """

  func file(_ h: CLIHarness) throws -> String {
    try String(contentsOfFile: h.directory + "/config/tokenbroker/config", encoding: .utf8)
  }

  @Test func addKeepsCommentsAndTheNewAccountParses() async throws {
    let h = try CLIHarness(config: Self.config)
    let rc = await h.run([
      "account", "add", "personal", "--provider", "google", "--client-id", "g-1", "--client-secret=s",
      "--scopes", "openid email", "--hosts", "europe-west1-docker.pkg.dev",
    ])
    #expect(rc == 0)
    let text = try file(h)
    #expect(text.contains("# my settings") && text.contains("# the work account"))
    #expect(text == Self.config + "\n\n[account personal]\nprovider = google\nclient-id = g-1\nclient-secret = s\nscopes = openid email\nhosts = europe-west1-docker.pkg.dev\n")
    #expect(await h.run(["accounts", "--names"]) == 0)
    #expect(h.stdout == "work\npersonal\n")
  }

  @Test func test_X13_hostsWithAPathBecomeAPathGroupBoundToTheAccount() async throws {
    let h = try CLIHarness(config: Self.config)
    let rc = await h.run([
      "account", "add", "fabrikam", "--provider", "azure", "--client-id", "c2", "--tenant", "fabrikam.example",
      "--hosts", "git.example.test dev.azure.com/fabrikam",
    ])
    #expect(rc == 0, "\(h.stderr)")
    let text = try file(h)
    #expect(text.contains("[account fabrikam]\nprovider = azure\nclient-id = c2\ntenant = fabrikam.example\nhosts = git.example.test\n"))
    #expect(text.hasSuffix("\n\n[host dev.azure.com/fabrikam]\naccount = fabrikam\n"))
    #expect(h.stderr.contains("setup-git fabrikam"))
    let config = try ConfigParser.parse(try #require(try KeyFileLoader.load(file: h.directory + "/config/tokenbroker/config", required: true)))
    #expect(try HostResolver(config: config).resolve(host: "dev.azure.com", path: "fabrikam/p/_git/r")?.account.name == "fabrikam")
  }

  @Test(arguments: [
    (["--provider", "azure", "--client-id", "c", "--colour", "red"], "--colour"),
    (["--provider", "azure", "--client-id", "c", "--redirect-port", "0"], "redirect-port"),
    (["--provider", "azure"], "client-id"),
    (["--provider", "okta", "--client-id", "c"], "provider"),
    (["--provider", "sharepoint", "--site", "https://x.sharepoint.com", "--via", "nobody"], "via"),
  ])
  func badKeyOrValueChangesNothing(args: [String], named: String) async throws {
    let h = try CLIHarness(config: Self.config)
    let before = try file(h)
    #expect(await h.run(["account", "add", "new"] + args) == 64)
    #expect(h.stderr.contains(named))
    #expect(try file(h) == before)
  }

  @Test func existingAccountNeedsReplace() async throws {
    let h = try CLIHarness(config: Self.config)
    let before = try file(h)
    #expect(await h.run(["account", "add", "work", "--provider", "azure", "--client-id", "new"]) == 64)
    #expect(h.stderr.contains("--replace"))
    #expect(try file(h) == before)
    #expect(await h.run(["account", "add", "work", "--provider", "azure", "--client-id", "new", "--replace"]) == 0)
    #expect(try file(h) == before.replacingOccurrences(of: "client-id = cid", with: "client-id = new"))
  }

  @Test func addCreatesAMissingFilePrivately() async throws {
    let h = try CLIHarness()
    #expect(await h.run(["account", "add", "a", "--provider", "azure", "--client-id", "c"]) == 0)
    let attributes = try FileManager.default.attributesOfItem(atPath: h.directory + "/config/tokenbroker/config")
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
  }

  @Test func removeDeletesTheGroupAndKeepsOtherComments() async throws {
    let h = try CLIHarness(config: Self.config + "\n\n[account other]\nprovider = azure\nclient-id = o\n")
    #expect(await h.run(["account", "remove", "other"]) == 0)
    let text = try file(h)
    #expect(text == Self.config + "\n")
  }

  @Test func removeOfAMissingAccountIsAnError() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["account", "remove", "nobody"]) == 64)
    #expect(h.stderr.contains("no account 'nobody'"))
  }

  @Test func removeOfAnAccountAHostUsesIsRefused() async throws {
    let h = try CLIHarness(config: Self.config)
    let before = try file(h)
    #expect(await h.run(["account", "remove", "work"]) == 64)
    #expect(h.stderr.contains("[host dev.example.test]"))
    #expect(try file(h) == before)
  }

  @Test(arguments: [
    ["account"], ["account", "rename"], ["account", "add"], ["account", "add", "x"], ["account", "add", "a b", "--provider", "azure"],
    ["account", "add", "x", "--provider", "azure", "--provider", "google"], ["account", "add", "x", "--provider"],
    ["account", "add", "x", "--provider", "azure", "--client-id", "a\nb"], ["account", "remove"],
  ])
  func usageErrors(args: [String]) async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(args) == 64)
    #expect(h.stderr.hasPrefix("error: "))
  }

  @Test func aKeyTheConfigDoesNotTakeIsRefusedWithTheOneItLooksLike() async throws {
    let h = try CLIHarness(config: Self.config)
    let before = try file(h)
    #expect(await h.run(["account", "add", "new", "--provider", "azure", "--client_id", "c"]) == 64)
    #expect(try file(h) == before)
    #expect(h.stderr.contains("'--client_id' is not an account key; did you mean '--client-id'?"))
    #expect(h.stderr.contains("the config was not changed"))
  }
}
