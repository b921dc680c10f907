@testable import BrokerCLI
import Foundation
import Testing

/// The explicit config file as the agent knows it: one absolute path, whichever way it was named
/// (`--config` wins over `TOKENBROKER_CONFIG`), for `agent run`, the agent `ensureRunning`
/// starts, and `exec`'s agent link alike.
@Suite struct AgentCommandTests {
  static func runtime(_ configFile: String?, env: [String: String] = [:]) -> Runtime {
    let context = ProcessContext(
      environment: env, uid: 0, readInput: { _ in [] }, writeOutput: { _ in }, writeError: { _ in }, isInteractive: false)
    return Runtime(context: context, globals: GlobalOptions(configFile: configFile))
  }

  @Test func theExplicitConfigIsOneAbsolutePath() {
    let cwd = FileManager.default.currentDirectoryPath
    #expect(AgentCommand.explicitConfig(Self.runtime("conf/tb")) == cwd + "/conf/tb")
    #expect(AgentCommand.explicitConfig(Self.runtime("/etc/tb")) == "/etc/tb")
    #expect(AgentCommand.explicitConfig(Self.runtime(nil, env: ["TOKENBROKER_CONFIG": "tb"])) == cwd + "/tb")
    #expect(AgentCommand.explicitConfig(Self.runtime("/a", env: ["TOKENBROKER_CONFIG": "/b"])) == "/a")
    #expect(AgentCommand.explicitConfig(Self.runtime(nil, env: ["TOKENBROKER_CONFIG": ""])) == "")
    #expect(AgentCommand.explicitConfig(Self.runtime(nil)) == "")
  }
}
