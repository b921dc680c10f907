import BrokerCore
import BrokerWire
import Glibc

/// A `RefreshHold` as a small file in the runtime directory: three lines, `until=` (Unix
/// seconds), `host=` and `reason=`; mode 0600, replaced by `rename` so a reader never sees half of
/// one, never followed through a symbolic link.
enum RefreshHoldFile {
  /// The largest hold file read; anything longer is not one of ours.
  static let maxBytes = 4096

  /// The hold at `path` if it is still in force at `now`; nil when there is none, it has ended, or
  /// the file is not a regular file of the expected shape.
  static func read(_ path: String, now: Int64) -> RefreshHold? {
    guard let bytes = KeyFileReader.readFile(path, limit: maxBytes + 1, followLinks: false), !bytes.isEmpty,
      bytes.count <= maxBytes
    else { return nil }
    var fields: [String: String] = [:]
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
      guard let eq = line.firstIndex(of: "=") else { continue }
      fields[String(line[..<eq])] = String(line[line.index(after: eq)...])
    }
    guard let until = fields["until"].flatMap({ Int64($0) }), until > now else { return nil }
    return RefreshHold(until: until, host: fields["host"] ?? "the provider", reason: fields["reason"] ?? "throttled")
  }

  /// Writes `hold` to `path` (a temporary file renamed over it), or removes `path` for nil.
  /// Failures are ignored: a hold is advice.
  static func write(_ hold: RefreshHold?, to path: String) {
    guard let hold else {
      unlink(path)
      return
    }
    let oneLine = { (s: String) in String(s.map { $0 == "\n" || $0 == "\r" ? " " : $0 }) }
    let text = "until=\(hold.until)\nhost=\(oneLine(hold.host))\nreason=\(oneLine(hold.reason))\n"
    let temporary = path + ".\(getpid()).tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { return }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, bytes.count) }
    close(fd)
    if written != bytes.count || rename(temporary, path) != 0 { unlink(temporary) }
  }
}
