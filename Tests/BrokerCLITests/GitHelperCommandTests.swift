@testable import BrokerCLI
import Testing

@Suite struct GitHelperCommandTests {
  @Test func capability() async throws {
    let h = try CLIHarness()
    #expect(await h.run(["capability"]) == 0)
    #expect(h.stdout == "version 0\ncapability authtype\n")
  }

  @Test func unknownActionUnderGitNameIsIgnored() async throws {
    let h = try CLIHarness()
    #expect(await h.run(["frobnicate"], argv0: "/usr/bin/git-credential-tokenbroker") == 0)
    #expect(await h.run([], argv0: "git-credential-tokenbroker") == 0)
    #expect(h.stdout.isEmpty && h.stderr.isEmpty)
  }

  @Test func unmatchedHostPrintsNothing() async throws {
    let h = try CLIHarness(config: fileStoreConfig)
    #expect(await h.run(["get"], input: "protocol=https\nhost=github.com\n\n") == 0)
    #expect(h.stdout.isEmpty)
  }

  /// interface.md §4, §8.1: a host whose account needs signing in gets `quit=1` and nothing else
  /// on stdout, so git neither asks the next helper nor prompts (its askpass) for a username.
  @Test func anAccountThatIsNotSignedInMakesGitQuit() async throws {
    let h = try CLIHarness(config: fileStoreConfig)
    #expect(await h.run(["get"], input: "protocol=https\nhost=git.example.test\n\n") == 3)
    #expect(h.stdout == "quit=1\n")
    #expect(h.stderr == "tokenbroker: 'work' is not signed in; run 'tokenbroker login work'\n")
    #expect(await h.run(["get"], input: "protocol=https\nhost=git.example.test\n\n", argv0: "git-credential-tokenbroker") == 3)
    #expect(h.stdout == "quit=1\nquit=1\n")
  }

  @Test func storeAcceptsAndKeepsNothing() async throws {
    let h = try CLIHarness(config: fileStoreConfig)
    #expect(await h.run(["store"], input: "protocol=https\nhost=git.example.test\nusername=u\npassword=p\n") == 0)
    #expect(h.stdout.isEmpty)
  }

  // B15, B16, B17: refused with empty stdout, one stderr line, exit 1.
  @Test(arguments: [
    "", "\n", "protocol=https\n", "host=\n", "protocol=https\nhost=\n", "username=user1\n",
    "protocol=https\nhost=evil.example\nhost=git.example.test\n",
    "protocol=https\nhost=evil.example\rhost=git.example.test\n",
    "url=https://evil.example/%0ahost=git.example.test\n",
    "url=https://git.example.test%0a/\n",
    "protocol=https\nhost=git.example.test\nurl=https://evil.example/\n",
    "protocol=https\nhost=a\u{0}b\n",
    "protocol=http\nhost=git.example.test\n",
    "protocol=ssh\nhost=git.example.test\n",
  ])
  func malformedOrUnsafeRequestsAreRefused(input: String) async throws {
    let h = try CLIHarness(config: fileStoreConfig)
    #expect(await h.run(["get"], input: input) == 1)
    #expect(h.stdout.isEmpty)
    #expect(h.stderr.split(separator: "\n").count == 1)
  }

  @Test func urlIsParsedIntoProtocolAndHost() throws {
    let t = try GitTarget(CredentialMessageFixture.make(["url": "https://user@Git.Example.Test:8443/repo.git"]))
    #expect(t.proto == "https" && t.host == "git.example.test:8443")
    #expect(GitTarget.parse(url: "https://%67it.example.test/")?.1 == "git.example.test")
    #expect(GitTarget.parse(url: "https://a%00b/") == nil)
    #expect(GitTarget.parse(url: "https:///x") == nil)
  }

  @Test func httpOnlyToLoopback() throws {
    #expect(throws: Never.self) { try GitTarget(CredentialMessageFixture.make(["protocol": "http", "host": "127.0.0.1:8080"])).requireSecureProtocol() }
    #expect(throws: Never.self) { try GitTarget(CredentialMessageFixture.make(["protocol": "http", "host": "localhost"])).requireSecureProtocol() }
    #expect(throws: HelperError.self) { try GitTarget(CredentialMessageFixture.make(["protocol": "http", "host": "localhost.evil"])).requireSecureProtocol() }
  }
}

import BrokerWire

enum CredentialMessageFixture {
  static func make(_ fields: KeyValuePairs<String, String>) -> CredentialMessage {
    CredentialMessage(fields.map { CredentialField($0.key, $0.value) })
  }
}
