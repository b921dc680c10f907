@testable import BrokerCLI
import BrokerCore
import Testing

/// The full program at the far end of a forwarded agent (interface.md §8): what would use a
/// store or config of this machine is refused with one line, exit 64; help, version, forward and
/// git's capability run.
@Suite struct ForwardedCallerTests {
  let far = ["TOKENBROKER_AGENT_SOCKET": "/tmp/tokenbroker-bob-forward.sock", "HOME": "/home/bob"]

  @Test func storeAndConfigCommandsAreRefused() async throws {
    for argv in [
      ["tokenbroker", "login", "work"], ["tokenbroker", "logout", "--all"], ["tokenbroker", "unlock"], ["tokenbroker", "lock"],
      ["tokenbroker", "revoke", "work"], ["tokenbroker", "account", "add", "x", "--provider", "azure"], ["tokenbroker", "accounts"],
      ["tokenbroker", "agent", "start"], ["tokenbroker", "--config", "/c", "token", "get", "work"],
      ["tokenbroker", "--config=/c", "--verbose", "login", "work"],
      ["/usr/bin/git-credential-tokenbroker", "get"], ["docker-credential-tokenbroker", "get"],
      ["tokenbroker", "exec", "work", "--", "az", "--help"],
    ] {
      let refusal = try #require(ForwardedCaller.refusal(argv, environment: far, inAgent: false), "\(argv)")
      #expect(refusal.exitStatus == .usage)
      #expect(refusal.description.contains("cannot be done over a forwarded agent"))
      #expect(refusal.description.contains("TOKENBROKER_AGENT_SOCKET=/tmp/tokenbroker-bob-forward.sock"))
    }
  }

  @Test func helpVersionForwardAndCapabilityRun() {
    for argv in [
      ["tokenbroker"], ["tokenbroker", "--help"], ["tokenbroker", "login", "--help"], ["tokenbroker", "help", "login"],
      ["tokenbroker", "version"], ["tokenbroker", "--version"], ["tokenbroker", "forward"], ["tokenbroker", "capability"],
      ["git-credential-tokenbroker", "capability"],
    ] {
      #expect(ForwardedCaller.refusal(argv, environment: far, inAgent: false) == nil, "\(argv)")
    }
  }

  @Test func onlyAForwardedSocketOutsideTheAgent() {
    #expect(ForwardedCaller.refusal(["tokenbroker", "login", "work"], environment: ["HOME": "/h"], inAgent: false) == nil)
    #expect(ForwardedCaller.refusal(["tokenbroker", "token", "get", "w"], environment: far, inAgent: true) == nil)
  }

  /// Through the program: one line on stderr, exit 64, nothing on stdout.
  @Test func refusedThroughMain() async throws {
    let h = try CLIHarness(config: fileStoreConfig)
    let status = await BrokerCommand.main(
      arguments: ["tokenbroker", "login", "work"],
      context: ProcessContext(
        environment: far, uid: 0, readInput: { _ in [] }, writeOutput: { _ in Issue.record("stdout") },
        writeError: { text in #expect(text.hasPrefix("tokenbroker: 'tokenbroker login work' (TOKENBROKER_AGENT_SOCKET=") && text.contains("cannot be done over a forwarded agent")) },
        isInteractive: false))
    #expect(status == 64)
    _ = h
  }
}
