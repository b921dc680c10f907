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

  func run(_ args: [String], input: String = "", argv0: String = "tokenbroker") async -> Int32 {
    let bytes = Array(input.utf8)
    let context = ProcessContext(
      environment: [
        "HOME": directory, "XDG_CONFIG_HOME": directory + "/config", "XDG_DATA_HOME": directory + "/data",
        "XDG_RUNTIME_DIR": directory,
      ],
      uid: 0, readInput: { limit in bytes.count > limit ? nil : bytes },
      writeOutput: { s in self.out.withLock { $0 += s } }, writeError: { s in self.err.withLock { $0 += s } },
      isInteractive: false)
    return await BrokerCommand.main(arguments: [argv0] + args, context: context)
  }
}

let fileStoreConfig = TestConfigs.fileStore
