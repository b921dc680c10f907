import BrokerCore
import BrokerStore
import BrokerWire
import Glibc
import Synchronization

/// The agent's config, parsed again only when a config file changed: every request still sees
/// the config as it is now (interface.md §8), but a warm request costs a read of its files, not a
/// GKeyFile parse and validation. A file is compared by its bytes (or the errno of opening it),
/// never by time stamps, so an edit within the file system's clock tick is not missed; a config
/// with a file of `comparedBytes` or more is parsed anew on every request. A config that fails to
/// load is never kept: each request reports the error afresh.
public final class AgentConfigCache: Sendable {
  private struct Snapshot: Equatable {
    var files: [String]
    var contents: [[UInt8]?]
    var errors: [Int32]
  }
  private let last = Mutex<(Snapshot, BrokerConfig, Int)?>(nil)
  private let parses = Atomic<Int>(0)
  /// The config parsed last, whole or not: what the cached tokens were obtained under.
  private let previous = Mutex<BrokerConfig?>(nil)

  private let read: @Sendable (String, Int) -> [UInt8]?

  /// - Parameter read: a file's bytes (the limit's worth when it is that long), or nil
  ///   when it cannot be opened: `KeyFileReader.readFile` (tests: a file edited right after).
  public init(read: @escaping @Sendable (String, Int) -> [UInt8]? = { KeyFileReader.readFile($0, limit: $1) }) { self.read = read }

  /// The parsed, validated config of `files` (as `KeyFileLoader.load` and `ConfigParser.parse`).
  /// - Throws: `ConfigError`.
  public func config(files: [String], explicit: Bool) throws -> BrokerConfig {
    try current(files: files, explicit: explicit).config
  }

  /// Whose cached tokens a newly parsed config makes stale: tokens come from a store and an
  /// account's settings, and a token of another store or of an account since redefined must not
  /// be handed out (a newcomer who switched to `store = encrypted-file` got the keyring's tokens
  /// from the agent while every other command said "not signed in").
  public enum StaleTokens: Equatable {
    case none
    /// `[broker] store` changed: every account's.
    case all
    /// These accounts changed or were removed.
    case accounts([String])
  }

  /// As `config(files:explicit:)`, with a revision that changes whenever the config is parsed
  /// anew (equal revisions: the same files, byte for byte), and the tokens that parse made stale.
  public func current(files: [String], explicit: Bool) throws -> (config: BrokerConfig, revision: Int, stale: StaleTokens) {
    let (snapshot, whole) = self.snapshot(files)
    if whole, let (kept, config, revision) = last.withLock({ $0 }), kept == snapshot { return (config, revision, .none) }
    // The very bytes compared are parsed: an edit between two reads cannot pair them with
    // another file's config.
    let raw =
      whole
      ? try KeyFileLoader.load(paths: files, contents: snapshot.contents, errors: snapshot.errors, explicit: explicit)
      : try KeyFileLoader.load(paths: files, explicit: explicit)
    let config = try ConfigParser.parse(raw)
    let revision = parses.add(1, ordering: .relaxed).newValue
    last.withLock { $0 = whole ? (snapshot, config, revision) : nil }
    let before = previous.withLock { kept in
      defer { kept = config }
      return kept
    }
    return (config, revision, Self.stale(before: before, after: config))
  }

  public static func stale(before: BrokerConfig?, after: BrokerConfig) -> StaleTokens {
    guard let before else { return .none }
    if before.settings.store != after.settings.store { return .all }
    // Their dependents (SharePoint `via`) go with them: `AccountDrop`.
    let changed = before.accounts.filter { after.account(named: $0.name) != $0 }.map(\.name)
    return changed.isEmpty ? .none : .accounts(changed)
  }

  /// The config last parsed, with its revision, while `files` still hold exactly the bytes it was
  /// parsed from; nil when a file changed or is too large to compare. Never parses: the socket
  /// loop's thread asks this for a kept answer (`AgentRequestHandler.quick`), and every other
  /// connection waits while it works.
  public func unchanged(files: [String]) -> (config: BrokerConfig, revision: Int)? {
    let (snapshot, whole) = self.snapshot(files)
    guard whole, let (kept, config, revision) = last.withLock({ $0 }), kept == snapshot else { return nil }
    return (config, revision)
  }

  /// The files' bytes (the first `comparedBytes` of each) or why each could not be read, and
  /// whether they are whole: a file read only in part cannot be compared, so such a config is
  /// parsed anew every time.
  private func snapshot(_ files: [String]) -> (Snapshot, whole: Bool) {
    var snapshot = Snapshot(files: files, contents: [], errors: [])
    for file in files {
      let bytes = read(file, Self.comparedBytes)
      snapshot.contents.append(bytes)
      snapshot.errors.append(bytes == nil ? errno : 0)
    }
    return (snapshot, snapshot.contents.allSatisfy { ($0?.count ?? 0) < Self.comparedBytes })
  }

  /// How many times a config was parsed (tests).
  public var parseCount: Int { parses.load(ordering: .relaxed) }

  /// Bytes of each file read for the comparison (1 MiB).
  public static let comparedBytes = 1 << 20
}
