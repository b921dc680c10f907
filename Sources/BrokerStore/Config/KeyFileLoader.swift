public import BrokerCore
internal import Glibc

/// Reads the config files with GLib's GKeyFile (interface.md §2.1).
///
/// GKeyFile rules apply: `#` starts a comment only at the start of a line (a `#` after a value is
/// part of the value); a value is the rest of its line with surrounding white space removed;
/// escapes `\s`, `\n`, `\t`, `\\` are decoded. Files merge key by key, later files winning
/// (`RawConfig.merged(with:)`).
public enum KeyFileLoader {
  /// Reads `paths` in order and merges them.
  /// - Parameters:
  ///   - paths: `BrokerPaths.configFiles`.
  ///   - explicit: true for a `--config`/`TOKENBROKER_CONFIG` file, which must exist; otherwise
  ///     a missing file is skipped.
  ///   - seen: told of each path and whether it was there (`--verbose`).
  /// - Throws: `ConfigError.unreadable(file:detail:)` for a missing explicit file, an unreadable
  ///   file or a syntax error (detail: GLib's message); `ConfigError.invalid` for a value GLib
  ///   cannot decode.
  public static func load(paths: [String], explicit: Bool, seen: (String, Bool) -> Void = { _, _ in }) throws
    -> RawConfig
  {
    try merged(paths, explicit: explicit, seen: seen) { keyFile, i in keyFile.load(paths[i]) }
  }

  /// Reads the files that `paths` names.
  /// - Throws: as `load(paths:explicit:)`.
  public static func load(_ paths: BrokerPaths) throws -> RawConfig {
    try load(paths: paths.configFiles, explicit: paths.configIsExplicit)
  }

  /// One file's groups (in file order) and entries, or nil when the file is missing and not
  /// `required`.
  /// - Throws: as `load(paths:explicit:)`.
  public static func load(file path: String, required: Bool) throws -> RawConfig? {
    let keyFile = GKeyFileHandle()
    return try entries(of: keyFile, loaded: keyFile.load(path), path: path, required: required)
  }

  /// As `load(paths:explicit:)`, from the bytes of the files as already read: `contents[i]` of
  /// `paths[i]`, or nil when opening it failed with `errors[i]` (an errno; `ENOENT`: missing).
  /// - Throws: as `load(paths:explicit:)`.
  public static func load(paths: [String], contents: [[UInt8]?], errors: [Int32], explicit: Bool) throws -> RawConfig {
    try merged(paths, explicit: explicit) { keyFile, i in
      contents[i].map { keyFile.load(data: $0) } ?? GKeyFileHandle.failedOpening(errors[i])
    }
  }

  /// The files merged in order, each loaded by `load` (given a fresh handle and its index).
  private static func merged(
    _ paths: [String], explicit: Bool, seen: (String, Bool) -> Void = { _, _ in },
    load: (GKeyFileHandle, Int) -> GKeyFileHandle.LoadResult
  ) throws -> RawConfig {
    var config = RawConfig()
    for (i, path) in paths.enumerated() {
      let keyFile = GKeyFileHandle()
      let raw = try entries(of: keyFile, loaded: load(keyFile, i), path: path, required: explicit)
      seen(path, raw != nil)
      if let raw { config = config.merged(with: raw) }
    }
    return config
  }

  private static func entries(of keyFile: GKeyFileHandle, loaded: GKeyFileHandle.LoadResult, path: String, required: Bool)
    throws -> RawConfig?
  {
    switch loaded {
    case .missing:
      if required { throw ConfigError.unreadable(file: path, detail: "no such file") }
      return nil
    case .failed(let message): throw ConfigError.unreadable(file: path, detail: message)
    case .loaded: break
    }
    var groups: [RawConfig.Group] = []
    for name in keyFile.groups {
      var entries: [RawConfig.Entry] = []
      for key in keyFile.keys(name) {
        switch keyFile.string(name, key) {
        case .success(let value): entries.append(RawConfig.Entry(key: key, value: value, file: path))
        case .failure(let error):
          throw ConfigError.invalid(file: path, group: name, key: key, problem: error.message)
        }
      }
      groups.append(RawConfig.Group(name: name, file: path, entries: entries))
    }
    return RawConfig(groups: groups)
  }
}
