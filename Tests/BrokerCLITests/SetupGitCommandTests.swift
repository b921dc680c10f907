@testable import BrokerCLI
import BrokerCore
import Foundation
import Testing

@Suite struct SetupGitCommandTests {
  static let config = fileStoreConfig + """
     *.pattern.example.test other.example.test:8443

    [account second]
    provider = azure
    client-id = cid2
    hosts = second.example.test

    [host dev.example.test]
    account = work
    """

  @Test func hostsOfOneAccountAndPatternsSkipped() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["setup-git", "work", "--dry-run"]) == 0)
    #expect(
      h.stdout.split(separator: "\n").map(String.init) == [
        "git config --global --replace-all credential.https://dev.example.test.helper ''",
        "git config --global --add credential.https://dev.example.test.helper tokenbroker",
        "git config --global --replace-all credential.https://git.example.test.helper ''",
        "git config --global --add credential.https://git.example.test.helper tokenbroker",
        "git config --global --replace-all credential.https://other.example.test:8443.helper ''",
        "git config --global --add credential.https://other.example.test:8443.helper tokenbroker",
      ])
    #expect(h.stderr.contains("skipping '*.pattern.example.test'"))
    #expect(!FileManager.default.fileExists(atPath: h.directory + "/.gitconfig"))
  }

  @Test func writesTheGlobalConfigOnceAndThenNothing() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["setup-git", "second"]) == 0)
    let file = h.directory + "/.gitconfig"
    let first = try String(contentsOfFile: file, encoding: .utf8)
    #expect(first.contains("[credential \"https://second.example.test\"]"))
    #expect(await h.run(["setup-git", "second"]) == 0)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == first)
  }

  @Test func test_X13_useHttpPathOnlyForHostsWithPathGroups() async throws {
    let h = try CLIHarness(
      config: Self.config + """

        [account org2]
        provider = azure
        client-id = cid3

        [host dev.example.test/org2]
        account = org2
        """)
    #expect(await h.run(["setup-git", "org2", "--dry-run"]) == 0)
    #expect(
      h.stdout.split(separator: "\n").map(String.init) == [
        "git config --global --replace-all credential.https://dev.example.test.useHttpPath true",
        "git config --global --replace-all credential.https://dev.example.test.helper ''",
        "git config --global --add credential.https://dev.example.test.helper tokenbroker",
      ])
    #expect(await h.run(["setup-git"]) == 0)
    let file = h.directory + "/.gitconfig"
    let first = try String(contentsOfFile: file, encoding: .utf8)
    #expect(first.contains("[credential \"https://dev.example.test\"]\n\tuseHttpPath = true"))
    #expect(!first.contains("[credential \"https://second.example.test\"]\n\tuseHttpPath"))
    #expect(first.components(separatedBy: "useHttpPath").count == 2)
    #expect(await h.run(["setup-git"]) == 0)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == first)
  }

  @Test func unknownAccountIsAConfigError() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["setup-git", "nobody"]) == 64)
    #expect(h.stderr.contains("no account 'nobody'"))
  }

  @Test func tooManyArgumentsIsAUsageError() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["setup-git", "a", "b"]) == 64)
    #expect(h.stderr.hasPrefix("error: "))
  }

  @Test func quoting() {
    #expect(GitConfig.quote("") == "''")
    #expect(GitConfig.quote("tokenbroker") == "tokenbroker")
    #expect(GitConfig.quote("it's") == #"'it'\''s'"#)
  }
}

/// `setup-git` with an installed `git-credential-tokenbroker`: its absolute path is written, an
/// older value of tokenbroker's updated, and a moved install named.
@Suite struct SetupGitHelperPathTests {
  static let path = "/usr/local/bin:/usr/bin:/bin"

  @Test func writesTheAbsolutePathAndThenNothing() async throws {
    let t = try InstalledProgramTests.Tree()
    let core = try t.file("prefix/libexec/tokenbroker/tokenbroker-core")
    let helper = try t.file("prefix/bin/git-credential-tokenbroker")
    let h = try CLIHarness(config: SetupGitCommandTests.config)
    #expect(await h.run(["setup-git", "second", "--dry-run"], executable: core, path: Self.path) == 0)
    #expect(h.stdout.hasSuffix("git config --global --add credential.https://second.example.test.helper \(helper)\n"))
    #expect(await h.run(["setup-git", "second"], executable: core, path: Self.path) == 0)
    let file = h.directory + "/.gitconfig"
    let first = try String(contentsOfFile: file, encoding: .utf8)
    #expect(first.contains("helper = \(helper)\n"))
    #expect(await h.run(["setup-git", "second"], executable: core, path: Self.path) == 0)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == first)
  }

  @Test func updatesTheValueByNameAndAMovedInstall() async throws {
    let t = try InstalledProgramTests.Tree()
    let h = try CLIHarness(config: SetupGitCommandTests.config)
    #expect(await h.run(["setup-git", "second"], path: Self.path) == 0)  // no helper found: by name
    let file = h.directory + "/.gitconfig"
    #expect(try String(contentsOfFile: file, encoding: .utf8).contains("helper = tokenbroker\n"))
    let oldCore = try t.file("old/libexec/tokenbroker/tokenbroker-core")
    let oldHelper = try t.file("old/bin/git-credential-tokenbroker")
    #expect(await h.run(["setup-git", "second"], executable: oldCore, path: Self.path) == 0)
    #expect(h.stderr.contains("updating the helper of credential.https://second.example.test.helper: 'tokenbroker' becomes '\(oldHelper)'"))
    try FileManager.default.removeItem(atPath: t.root + "/old")  // the install moves
    let core = try t.file("new/libexec/tokenbroker/tokenbroker-core")
    let helper = try t.file("new/bin/git-credential-tokenbroker")
    #expect(await h.run(["setup-git", "second", "--dry-run"], executable: core, path: Self.path) == 0)
    #expect(h.stderr.contains("names '\(oldHelper)', which is missing or not executable (a moved or removed install); setup-git points it at '\(helper)'"))
    #expect(await h.run(["setup-git", "second"], executable: core, path: Self.path) == 0)
    let text = try String(contentsOfFile: file, encoding: .utf8)
    #expect(text.contains("helper = \(helper)\n") && !text.contains(oldHelper))
  }
}
