import BrokerBasics
import BrokerWire
import Glibc
import Synchronization

/// The small `key=value` files the runtime directory keeps per account (a throttle's hold, the
/// account's state): one pair a line, at most `maxBytes`, mode 0600, never followed through a
/// symbolic link, replaced whole so that a reader sees the old file or the new one, never half.
enum KeyValueFile {
  /// The largest file read; anything longer is not one of ours.
  static let maxBytes = 4096

  /// Tells apart the temporary files of concurrent writers in one process.
  private static let writes = Atomic<Int>(0)

  /// The pairs in the file at `path` (a later line wins over an earlier one with the same key);
  /// nil when there is none, it is not a regular file, or it is larger than `maxBytes`.
  static func read(_ path: String) -> [String: String]? {
    guard let bytes = KeyFileReader.readFile(path, limit: maxBytes + 1, followLinks: false), !bytes.isEmpty,
      bytes.count <= maxBytes
    else { return nil }
    var fields: [String: String] = [:]
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
      guard let eq = line.firstIndex(of: "=") else { continue }
      fields[String(line[..<eq])] = String(line[line.index(after: eq)...])
    }
    return fields
  }

  /// Replaces the file at `path` with `fields`, in order (a value's line ends become spaces): a
  /// new file beside it, written and synced, renamed over it. - Returns: false when that failed
  /// (the old file, if any, is left as it was).
  @discardableResult
  static func write(_ fields: [(String, String)], to path: String) -> Bool {
    let oneLine = { (s: String) in String(s.map { $0 == "\n" || $0 == "\r" ? " " : $0 }) }
    let bytes = Array(fields.map { "\($0.0)=\(oneLine($0.1))\n" }.joined().utf8)
    let n = writes.wrappingAdd(1, ordering: .relaxed).oldValue
    let temporary = path + ".\(getpid()).\(n).tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { return false }
    let synced = writeAll(fd, bytes) == nil && fsync(fd) == 0
    close(fd)
    guard synced, rename(temporary, path) == 0 else {
      unlink(temporary)
      return false
    }
    return true
  }
}
