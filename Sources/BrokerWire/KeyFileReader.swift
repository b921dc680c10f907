import Glibc

/// The smallest GKeyFile reader that answers one question fast: the value of one key of one group,
/// for the front (it must not load GLib). The full program reads config with GKeyFile itself.
///
/// GKeyFile's rules: leading white space of a line is ignored; a line starting with `#` is a
/// comment, and only such a line (a `#` after a value belongs to the value); `[group]` starts a
/// group (a group may appear again: its keys merge); `key = value` with both sides trimmed; a later
/// value of the same key wins; localised keys (`key[de]`) are other keys. Escapes (`\s`, `\n`, …)
/// are not decoded: a value holding a backslash is returned as written, so callers that compare
/// against plain words (`auto`, `off`) fall back to their safe choice.
public enum KeyFileReader {
  /// The value of `key` in `group` in `text`, or nil.
  public static func value(group: String, key: String, in text: [UInt8]) -> String? {
    var current: String?
    var found: String?
    for raw in text.split(separator: 0x0A, omittingEmptySubsequences: true) {
      var line = raw[...]
      while let first = line.first, isSpace(first) { line = line.dropFirst() }
      while let last = line.last, isSpace(last) { line = line.dropLast() }
      guard let first = line.first, first != UInt8(ascii: "#") else { continue }
      if first == UInt8(ascii: "[") {
        guard let close = line.lastIndex(of: UInt8(ascii: "]")) else { current = nil; continue }
        current = String(decoding: line[line.index(after: line.startIndex)..<close], as: UTF8.self)
        continue
      }
      guard current == group, let eq = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
      var k = line[..<eq]
      while let last = k.last, isSpace(last) { k = k.dropLast() }
      guard String(decoding: k, as: UTF8.self) == key else { continue }
      var v = line[line.index(after: eq)...]
      while let f = v.first, isSpace(f) { v = v.dropFirst() }
      found = String(decoding: v, as: UTF8.self)
    }
    return found
  }

  /// The value of `key` in `group` across `files` read in order (a later file wins key by key);
  /// missing or unreadable files are skipped.
  public static func value(group: String, key: String, files: [String]) -> String? {
    var found: String?
    for path in files {
      guard let text = readFile(path, limit: 1 << 20) else { continue }
      if let v = value(group: group, key: key, in: text) { found = v }
    }
    return found
  }

  /// The bytes of a file (at most `limit`), or nil when it cannot be opened.
  public static func readFile(_ path: String, limit: Int) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    // A stack buffer, not a zeroed array: the agent reads its config on every request.
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8192) { chunk -> [UInt8]? in
      while out.count < limit {
        let n = read(fd, chunk.baseAddress, chunk.count)
        if n < 0 && errno == EINTR { continue }
        if n < 0 { return nil }
        if n == 0 { break }
        out.append(contentsOf: chunk[0..<n])
      }
      return out
    }
  }

  private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0B || b == 0x0C }
}
