internal import BrokerCore
internal import CLibsecret
internal import Glibc

/// Rewrites a config file through GKeyFile, keeping its comments (`G_KEY_FILE_KEEP_COMMENTS`), for
/// `tokenbroker account add` / `account remove` (interface.md §2.1; spacing around `=` may be
/// normalised).
///
/// The text is written with `g_file_set_contents_full` (atomic, fsync), not
/// `g_key_file_save_to_file`, because the latter recreates the file with mode 0666 & ~umask: a new
/// file is created 0600 (its directory 0700), an existing file keeps its mode, and a symbolic link
/// is followed so the linked file is updated.
public enum KeyFileEditor {
  /// Makes `group` hold exactly `entries` (in that order for new keys; existing keys keep their
  /// place and comments), creating the file and the group if needed.
  /// - Throws: `ConfigError.unreadable` when the file cannot be parsed or written.
  public static func setGroup(file: String, group: String, entries: [(String, String)]) throws {
    let keyFile = try open(file)
    let wanted = Set(entries.map(\.0))
    for key in keyFile.keys(group) where !wanted.contains(key) { keyFile.removeKey(group, key) }
    for (key, value) in entries { keyFile.set(group, key, value) }
    try save(keyFile, to: file)
  }

  /// Removes `group` and its entries (and the comment above it).
  /// - Returns: false when the file or the group does not exist (nothing is written then).
  /// - Throws: `ConfigError.unreadable` when the file cannot be parsed or written.
  @discardableResult
  public static func removeGroup(file: String, group: String) throws -> Bool {
    let keyFile = try open(file)
    guard keyFile.hasGroup(group) else { return false }
    keyFile.removeGroup(group)
    try save(keyFile, to: file)
    return true
  }

  private static func open(_ file: String) throws -> GKeyFileHandle {
    let keyFile = GKeyFileHandle()
    if case .failed(let message) = keyFile.load(file) { throw ConfigError.unreadable(file: file, detail: message) }
    return keyFile
  }

  private static func save(_ keyFile: GKeyFileHandle, to file: String) throws {
    var target = file
    var mode: mode_t = 0o600
    var st = stat()
    if lstat(file, &st) == 0 {
      if st.st_mode & S_IFMT == S_IFLNK, let resolved = realpath(file, nil) {
        target = String(cString: resolved)
        free(resolved)
        if stat(target, &st) != 0 { st.st_mode = 0o600 }
      }
      mode = st.st_mode & 0o7777
    } else {
      try createDirectory(of: file)
    }
    let bytes = keyFile.data
    var error: UnsafeMutablePointer<GError>?
    let flags = GFileSetContentsFlags(G_FILE_SET_CONTENTS_CONSISTENT.rawValue | G_FILE_SET_CONTENTS_DURABLE.rawValue)
    let ok = bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        g_file_set_contents_full(target, $0.baseAddress, gssize($0.count), flags, Int32(mode), &error)
      }
    }
    if ok == 0 {
      let message = error?.pointee.message.map { String(cString: $0) } ?? "cannot write"
      if let error { g_error_free(error) }
      throw ConfigError.unreadable(file: file, detail: message)
    }
  }

  /// Creates the missing directories above `file` with mode 0700.
  private static func createDirectory(of file: String) throws {
    let parts = file.split(separator: "/", omittingEmptySubsequences: true).dropLast()
    var prefix = file.hasPrefix("/") ? "" : "."
    for part in parts {
      prefix += "/" + part
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
        throw ConfigError.unreadable(file: file, detail: "cannot create \(prefix): \(String(cString: strerror(errno)))")
      }
    }
  }
}
