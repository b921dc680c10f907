import BrokerBasics
internal import CLibsecret
internal import Glibc

/// Writes a config file's new text in place of the old (`KeyFileEditor.write()`).
enum KeyFileWrite {
  /// Writes `bytes` to `file` with `g_file_set_contents_full` (a temporary file renamed over it,
  /// fsync'd): an existing file keeps its mode and a symbolic link is followed, so the file it
  /// names is replaced; a new file is created 0600 and its missing directories 0700.
  /// - Throws: `ConfigEditError.unwritable` with GLib's or the system's words.
  static func atomically(_ bytes: [UInt8], to file: String) throws {
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
      throw ConfigEditError.unwritable(file: file, detail: message)
    }
  }

  /// Creates the missing directories above `file` with mode 0700.
  private static func createDirectory(of file: String) throws {
    let parts = file.split(separator: "/", omittingEmptySubsequences: true).dropLast()
    var prefix = file.hasPrefix("/") ? "" : "."
    for part in parts {
      prefix += "/" + part
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
        throw ConfigEditError.unwritable(file: file, detail: "cannot create \(prefix): \(Errno.current.description)")
      }
    }
  }
}
