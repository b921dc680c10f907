import BrokerBasics
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
    var scan = Scan(group: group, key: key)
    for line in text.split(separator: 0x0A, omittingEmptySubsequences: true) { scan.take(line) }
    return scan.found
  }

  /// The value of `key` in `group` across `files` read in order (a later file wins key by key);
  /// missing or unreadable files are skipped. Each file is read whole, whatever its size, a chunk
  /// at a time (a setting past any size limit still counts, as GKeyFile in the full program sees it).
  public static func value(group: String, key: String, files: [String]) -> String? {
    var found: String?
    for path in files {
      var scan = Scan(group: group, key: key)
      guard forEachLine(path, { scan.take($0) }) else { continue }
      if let v = scan.found { found = v }
    }
    return found
  }

  /// One key file's lines, taken in order.
  struct Scan {
    let group: String
    let key: String
    private var current: String?
    /// The value so far (a later line of the key wins).
    private(set) var found: String?

    init(group: String, key: String) {
      self.group = group
      self.key = key
    }

    mutating func take(_ raw: ArraySlice<UInt8>) {
      var line = raw
      while let first = line.first, isSpace(first) { line = line.dropFirst() }
      while let last = line.last, isSpace(last) { line = line.dropLast() }
      guard let first = line.first, first != UInt8(ascii: "#") else { return }
      if first == UInt8(ascii: "[") {
        guard let close = line.lastIndex(of: UInt8(ascii: "]")) else {
          current = nil
          return
        }
        current = String(decoding: line[line.index(after: line.startIndex)..<close], as: UTF8.self)
        return
      }
      guard current == group, let eq = line.firstIndex(of: UInt8(ascii: "=")) else { return }
      var k = line[..<eq]
      while let last = k.last, isSpace(last) { k = k.dropLast() }
      guard String(decoding: k, as: UTF8.self) == key else { return }
      var v = line[line.index(after: eq)...]
      while let f = v.first, isSpace(f) { v = v.dropFirst() }
      found = String(decoding: v, as: UTF8.self)
    }
  }

  /// Calls `body` with each LF-separated line of the file at `path` (without its LF; the last one
  /// also without), reading it in chunks to its end, whatever its size.
  /// - Returns: false when the file cannot be opened or a read fails.
  static func forEachLine(_ path: String, _ body: (ArraySlice<UInt8>) -> Void) -> Bool {
    let fd = openRegular(path)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var pending: [UInt8] = []  // the start of a line that the next chunk ends
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8192) { chunk -> Bool in
      while true {
        let n = retryingOnInterrupt { read(fd, chunk.baseAddress, chunk.count) }
        if n < 0 { return false }
        if n == 0 { break }
        pending.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[0..<n]))
        // Only the new bytes can hold the LF that ends a line (a long line stays linear).
        guard let lastLF = pending[(pending.count - n)...].lastIndex(of: 0x0A) else { continue }
        for line in pending[..<lastLF].split(separator: 0x0A, omittingEmptySubsequences: true) { body(line) }
        pending.removeSubrange(...lastLF)
      }
      if !pending.isEmpty { body(pending[...]) }
      return true
    }
  }

  /// The first `limit` bytes of a file (all of a shorter one), or nil when it cannot be opened or
  /// read, or is not a regular file (errno `EINVAL`; `openRegular`). Every small file the program
  /// reads whole goes through here. `followLinks: false`: a symbolic link at `path` is refused
  /// (`ELOOP`), for files in directories another program writes.
  public static func readFile(_ path: String, limit: Int, followLinks: Bool = true) -> [UInt8]? {
    let fd = openRegular(path, followLinks: followLinks)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    // A stack buffer, not a zeroed array: the agent reads its config on every request.
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8192) { chunk -> [UInt8]? in
      while out.count < limit {
        let n = retryingOnInterrupt { read(fd, chunk.baseAddress, min(chunk.count, limit - out.count)) }
        if n < 0 { return nil }
        if n == 0 { break }
        out.append(contentsOf: chunk[0..<n])
      }
      return out
    }
  }

  /// Opens `path` for reading as GKeyFile reads a config file: only a regular file (GKeyFile
  /// refuses others: "Not a regular file"), and without blocking in `open` (a FIFO nobody writes,
  /// a device: the agent reads its config on its socket loop's thread, the front before it starts
  /// an agent; neither may wait on one, nor read /dev/zero forever).
  /// - Returns: the descriptor, or -1 with errno set (`EINVAL`: not a regular file).
  static func openRegular(_ path: String, followLinks: Bool = true) -> Int32 {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followLinks ? 0 : O_NOFOLLOW))
    guard fd >= 0 else { return -1 }
    var info = stat()
    if fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG { return fd }
    close(fd)
    errno = EINVAL
    return -1
  }

  private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0B || b == 0x0C }
}
