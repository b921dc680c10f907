import BrokerAgent
@testable import BrokerCLI
import BrokerTestSupport
import Foundation

/// A private directory with a config file under `config/tokenbroker/`, removed when released.
final class ConfigHome: Sendable {
  let directory: String

  init(config: String? = nil) throws {
    directory = NSTemporaryDirectory() + "tb-agent-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory + "/config/tokenbroker", withIntermediateDirectories: true)
    if let config { try config.write(toFile: directory + "/config/tokenbroker/config", atomically: true, encoding: .utf8) }
  }

  /// HOME and the XDG directories of a user whose files are all under `directory`.
  var environment: [String: String] {
    [
      "HOME": directory, "XDG_CONFIG_HOME": directory + "/config", "XDG_DATA_HOME": directory + "/data",
      "XDG_RUNTIME_DIR": directory,
    ]
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }
}

let fileStoreConfig = TestConfigs.fileStore

/// A request handler as `tokenbroker agent run` builds it: commands run through the CLI's
/// `AgentRunCommand.runCommand`, the real program, in-process.
func requestHandler(
  cache: TokenCache, environment: [String: String], stop: @escaping @Sendable (_ why: String) -> Void = { _ in }
) -> AgentRequestHandler {
  AgentRequestHandler(
    cache: cache, config: "", environment: environment, programVersion: BrokerCommand.version,
    runCommand: AgentRunCommand.runCommand, stop: stop)
}
