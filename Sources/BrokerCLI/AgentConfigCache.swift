import BrokerCore
import BrokerStore
import BrokerWire
import Glibc
import Synchronization

/// The agent's config, parsed again only when a config file changed: every request still sees
/// the config as it is now (interface.md §8), but a warm request costs a read of its files, not a
/// GKeyFile parse and validation. A file is compared by its bytes (or the errno of opening it),
/// never by time stamps, so an edit within the file system's clock tick is not missed. A config
/// that fails to load is never kept: each request reports the error afresh.
final class AgentConfigCache: Sendable {
  private struct Snapshot: Equatable {
    var files: [String]
    var contents: [[UInt8]?]
    var errors: [Int32]
  }
  private let last = Mutex<(Snapshot, BrokerConfig)?>(nil)

  init() {}

  /// The parsed, validated config of `files` (as `KeyFileLoader.load` and `ConfigParser.parse`).
  /// - Throws: `ConfigError`.
  func config(files: [String], explicit: Bool) throws -> BrokerConfig {
    var snapshot = Snapshot(files: files, contents: [], errors: [])
    for file in files {
      let bytes = KeyFileReader.readFile(file, limit: 1 << 20)
      snapshot.contents.append(bytes)
      snapshot.errors.append(bytes == nil ? errno : 0)
    }
    if let (kept, config) = last.withLock({ $0 }), kept == snapshot { return config }
    let config = try ConfigParser.parse(KeyFileLoader.load(paths: files, explicit: explicit))
    last.withLock { $0 = (snapshot, config) }
    return config
  }
}
