@testable import BrokerCLI
import BrokerTestSupport
import Foundation
import Synchronization

/// Runs a command in-process with captured streams and a private config directory.
final class CLIHarness: Sendable {
  let directory: String
  private let out = Mutex("")
  private let err = Mutex("")

  init(config: String? = nil) throws {
    directory = NSTemporaryDirectory() + "tb-cli-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory + "/config/tokenbroker", withIntermediateDirectories: true)
    if let config { try config.write(toFile: directory + "/config/tokenbroker/config", atomically: true, encoding: .utf8) }
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  var stdout: String { out.withLock { $0 } }
  var stderr: String { err.withLock { $0 } }

  /// - Parameters:
  ///   - executable: the program's file the command sees (`ProcessContext.executable`).
  ///   - path: the `PATH` it sees (none when nil).
  func run(
    _ args: [String], input: String = "", argv0: String = "tokenbroker", executable: String? = nil, path: String? = nil
  ) async -> Int32 {
    let bytes = Array(input.utf8)
    var environment = [
      "HOME": directory, "XDG_CONFIG_HOME": directory + "/config", "XDG_DATA_HOME": directory + "/data",
      "XDG_RUNTIME_DIR": directory,
    ]
    environment["PATH"] = path
    var context = ProcessContext(
      environment: environment,
      uid: 0, readInput: { limit in bytes.count > limit ? nil : bytes },
      writeOutput: { s in self.out.withLock { $0 += s } }, writeError: { s in self.err.withLock { $0 += s } },
      isInteractive: false)
    context.executable = executable
    return await BrokerCommand.main(arguments: [argv0] + args, context: context)
  }
}

let fileStoreConfig = TestConfigs.fileStore
