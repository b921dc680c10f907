import BrokerBasics
internal import BrokerCore
internal import BrokerWire
internal import CLibsecret
internal import Glibc

/// Owns one `GKeyFile` (GLib key-file parser, interface.md §2.1) and frees it in `deinit`.
/// Every GError and string array is freed in the method that receives it.
final class GKeyFileHandle {
  let pointer: OpaquePointer

  init() { pointer = g_key_file_new() }
  deinit { g_key_file_unref(pointer) }

  /// Outcome of reading a file.
  enum LoadResult {
    case loaded
    case missing
    case failed(String)
  }

  /// The file at `path` parsed as `g_key_file_load_from_file` parses it (the flags of
  /// `load(data:)`), read through one descriptor: opened without blocking, checked to be a regular
  /// file on that descriptor and read from it (`KeyFileReader.readFile`), so nothing can be
  /// swapped in between a check and the open. GKeyFile's own open of a FIFO would wait for a
  /// writer before it found the file is not regular.
  /// - Returns: `.missing` (ENOENT), `.failed` with GLib's words ("Not a regular file") or the
  ///   system's (`strerror`), or the parse's outcome.
  func load(_ path: String) -> LoadResult {
    guard let bytes = KeyFileReader.readFile(path, limit: Int.max) else { return Self.failedOpening(errno) }
    return load(data: bytes)
  }

  /// What a file that could not be opened or read (`errno`, as `KeyFileReader.readFile` leaves
  /// it) loads as: `.missing` for ENOENT, "Not a regular file" (GKeyFile's words) for EINVAL,
  /// else the system's message.
  static func failedOpening(_ errno: Int32) -> LoadResult {
    switch errno {
    case ENOENT: return .missing
    case EINVAL: return .failed("Not a regular file")
    default: return .failed(Errno.current.description)
    }
  }

  /// `g_key_file_load_from_data` of a file's bytes, with the flags of `load(_:)`.
  func load(data bytes: [UInt8]) -> LoadResult {
    var error: UnsafeMutablePointer<GError>?
    let text = bytes + [0]  // a valid pointer also for an empty file
    let loaded = text.withUnsafeBufferPointer { b in
      b.withMemoryRebound(to: CChar.self) { g_key_file_load_from_data(pointer, $0.baseAddress, gsize(bytes.count), Self.flags, &error) }
    }
    return loaded != 0 ? .loaded : Self.result(error)
  }

  private static let flags = GKeyFileFlags(G_KEY_FILE_KEEP_COMMENTS.rawValue | G_KEY_FILE_KEEP_TRANSLATIONS.rawValue)

  private static func result(_ error: UnsafeMutablePointer<GError>?) -> LoadResult {
    guard let error else { return .failed("unknown error") }
    defer { g_error_free(error) }
    if error.pointee.domain == g_file_error_quark() && error.pointee.code == Int32(G_FILE_ERROR_NOENT.rawValue) {
      return .missing
    }
    return .failed(Self.message(error))
  }

  /// Group names in file order.
  var groups: [String] { Self.strings(g_key_file_get_groups(pointer, nil)) }

  /// Key names of `group` in file order (empty when the group does not exist).
  func keys(_ group: String) -> [String] { Self.strings(g_key_file_get_keys(pointer, group, nil, nil)) }

  func hasGroup(_ group: String) -> Bool { g_key_file_has_group(pointer, group) != 0 }

  /// `g_key_file_get_string`: the value with escapes (`\s`, `\n`, `\t`, `\\`) decoded, and
  /// trailing spaces and tabs of the line removed (GKeyFile keeps them; interface.md §2.1 trims).
  /// An escaped trailing space (`\s`) is kept.
  func string(_ group: String, _ key: String) -> Result<String, KeyFileValueError> {
    var error: UnsafeMutablePointer<GError>?
    let value = g_key_file_get_string(pointer, group, key, &error)
    defer { g_free(value) }
    if let error {
      defer { g_error_free(error) }
      return .failure(KeyFileValueError(message: Self.message(error)))
    }
    let decoded = value.map { String(cString: $0) } ?? ""
    // Literal trailing blanks of the raw value are the decoded value's last characters, one for one.
    let raw = g_key_file_get_value(pointer, group, key, nil)
    defer { g_free(raw) }
    let blanks = raw.map { String(cString: $0) }?.reversed().prefix { $0 == " " || $0 == "\t" }.count ?? 0
    return .success(String(decoded.dropLast(blanks)))
  }

  /// `value` as `g_key_file_set_string` writes it into a file (`\s` for leading blanks, `\n`,
  /// `\t`, `\r`, `\\`), read back raw with `g_key_file_get_value`.
  static func escaped(_ value: String) -> String {
    let scratch = GKeyFileHandle()
    g_key_file_set_string(scratch.pointer, "g", "k", value)
    let raw = g_key_file_get_value(scratch.pointer, "g", "k", nil)
    defer { g_free(raw) }
    return raw.map { String(cString: $0) } ?? value
  }

  private static func message(_ error: UnsafeMutablePointer<GError>) -> String {
    error.pointee.message.map { String(cString: $0) } ?? "unknown error"
  }

  /// Copies and frees a NULL-terminated `gchar **`.
  private static func strings(_ array: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
    guard let array else { return [] }
    defer { g_strfreev(array) }
    var result: [String] = []
    var i = 0
    while let s = array[i] {
      result.append(String(cString: s))
      i += 1
    }
    return result
  }
}

/// GLib's message for a value `g_key_file_get_string` rejects (for example a bad escape).
struct KeyFileValueError: Error {
  let message: String
}
