public import BrokerCore
internal import BrokerWire
internal import CLibsecret
internal import Glibc

/// One edit of a config file for `tokenbroker account add` / `account remove` (interface.md
/// §2.1): groups are set or removed line by line (`KeyFileText`), so every line outside the
/// edited group, its comments and blank lines keep their bytes.
///
/// Before anything is written the new text is parsed with GKeyFile and must read as the old file
/// with only that edit applied (`result()`). The text is written with `g_file_set_contents_full`
/// (atomic, fsync), not `g_key_file_save_to_file`, which recreates the file with mode
/// 0666 & ~umask: a new file is created 0600 (its directory 0700), an existing file keeps its
/// mode, and a symbolic link is followed so the linked file is updated.
public struct KeyFileEditor {
  public let file: String
  /// The file's bytes as read (nil: it did not exist).
  private let original: [UInt8]?
  private var text: KeyFileText
  /// The file's groups as GKeyFile read them, with the edits applied.
  private var expected: RawConfig

  /// Reads `file` (a missing file is empty).
  /// - Throws: `ConfigError.unreadable` when it exists but cannot be read or parsed.
  public init(file: String) throws {
    self.file = file
    original = KeyFileReader.readFile(file, limit: Int.max)
    if original == nil, case .failed(let message) = GKeyFileHandle.failedOpening(errno) {
      throw ConfigError.unreadable(file: file, detail: message)
    }
    text = KeyFileText(original ?? [])
    read = try Self.parse(original ?? [], file: file)
    expected = read
  }

  /// The file as GKeyFile read it (empty when missing).
  public let read: RawConfig

  /// Makes `group` hold `entries`: a key the group has gets the new value in its place, the
  /// others follow the group's last key; a group the file lacks is added at its end. Keys not
  /// named keep their values.
  public mutating func set(group: String, entries: [(String, String)]) {
    text.set(group: group, entries: entries.map { ($0.0, Array(GKeyFileHandle.escaped($0.1).utf8)) })
    guard let g = expected.groups.firstIndex(where: { $0.name == group }) else {
      let new = entries.map { RawConfig.Entry(key: $0.0, value: $0.1, file: file) }
      expected.groups.append(RawConfig.Group(name: group, file: file, entries: new))
      return
    }
    for (key, value) in entries {
      // A key written twice is listed twice, each with the value GKeyFile reads (the last line's).
      let at = expected.groups[g].entries.indices.filter { expected.groups[g].entries[$0].key == key }
      if at.isEmpty { expected.groups[g].entries.append(RawConfig.Entry(key: key, value: value, file: file)) }
      for i in at { expected.groups[g].entries[i].value = value }
    }
  }

  /// Removes `group` with its entries and the comment directly above it.
  /// - Returns: false when the file has no such group.
  @discardableResult
  public mutating func remove(group: String) -> Bool {
    expected.groups.removeAll { $0.name == group }
    return text.remove(group: group)
  }

  /// The edited text as GKeyFile reads it.
  /// - Throws: `ConfigEditError.notLineByLine` when that differs from the file as read with only
  ///   the edits applied (nothing is written then).
  public func result() throws -> RawConfig {
    let parsed: RawConfig
    do { parsed = try Self.parse(text.bytes, file: file) } catch { throw ConfigEditError.notLineByLine(file: file) }
    guard parsed == expected else { throw ConfigEditError.notLineByLine(file: file) }
    return parsed
  }

  /// Writes the edited text after checking it (`result()`) and that the file still holds what
  /// was read.
  /// - Throws: `ConfigEditError`; the file is unchanged then.
  public func write() throws {
    _ = try result()
    guard KeyFileReader.readFile(file, limit: Int.max) == original else { throw ConfigEditError.changed(file: file) }
    try KeyFileWrite.atomically(text.bytes, to: file)
  }

  private static func parse(_ bytes: [UInt8], file: String) throws -> RawConfig {
    try KeyFileLoader.load(paths: [file], contents: [bytes], errors: [0], explicit: true)
  }
}

/// Why an edit of the config file was not written.
public enum ConfigEditError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The file's lines could not be edited without changing what other lines mean.
  case notLineByLine(file: String)
  /// Another process changed the file since it was read.
  case changed(file: String)
  case unwritable(file: String, detail: String)

  public var description: String {
    switch self {
    case .notLineByLine(let file):
      return "cannot edit \(file) line by line without changing its other groups; edit it by hand (it was not changed)"
    case .changed(let file): return "\(file) changed while it was being edited; run the command again (it was not changed)"
    case .unwritable(let file, let detail): return "cannot write \(file) (\(detail)); it was not changed"
    }
  }
}
