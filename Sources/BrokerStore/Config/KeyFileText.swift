/// A key file's text as lines, edited group by group so that every line outside the edited
/// group keeps its bytes (`account add` / `account remove`, interface.md §2.1).
///
/// Lines are classified as GKeyFile parses them (leading white space skipped): blank, comment
/// (`#`), group header (`[NAME]`, white space allowed after `]`), entry (`KEY=VALUE`, the key
/// trimmed). A group's block is its leading comment (the comment lines directly above its
/// header, no blank line between), its header, and its lines through its last entry and the
/// comment lines directly below that. Blank lines and comments set apart by a blank line belong
/// to no group and stay where they are. Line ends are `\n` or `\r\n`; new lines take the file's
/// first line end.
struct KeyFileText {
  struct Line {
    var content: [UInt8]
    /// `\n`, `\r\n`, or empty for a last line without one.
    var end: [UInt8]
  }

  enum Kind: Equatable {
    case blank, comment, other
    case header(String)
    case entry(String)
  }

  private(set) var lines: [Line]
  private let newline: [UInt8]
  /// Whether new entries are written `KEY = VALUE` (as most of the file's entries are) or `KEY=VALUE`.
  private let spaced: Bool

  init(_ bytes: [UInt8]) {
    var lines: [Line] = []
    var start = 0
    for (i, b) in bytes.enumerated() where b == 0x0A {
      let cr = i > start && bytes[i - 1] == 0x0D
      lines.append(Line(content: Array(bytes[start..<(cr ? i - 1 : i)]), end: cr ? [0x0D, 0x0A] : [0x0A]))
      start = i + 1
    }
    if start < bytes.count { lines.append(Line(content: Array(bytes[start...]), end: [])) }
    self.lines = lines
    newline = lines.first { !$0.end.isEmpty }?.end ?? [0x0A]
    let entries = lines.filter { if case .entry = Self.kind($0.content) { true } else { false } }
    spaced = entries.isEmpty || entries.filter { $0.content.contains(0x20) }.count * 2 >= entries.count
  }

  var bytes: [UInt8] { lines.flatMap { $0.content + $0.end } }

  /// Makes `group` hold `entries` (values already escaped for the file, `GKeyFileHandle.escaped`):
  /// an entry whose key the group has replaces the value on that key's lines, keeping what stands
  /// before the value; the others follow the group's last entry, or, for a group the file lacks,
  /// go into a new group at the end of the file after a blank line.
  mutating func set(group: String, entries: [(key: String, value: [UInt8])]) {
    let blocks = self.blocks(of: group)
    guard let last = blocks.last else {
      append(group: group, entries: entries)
      return
    }
    let lastEntry = (last.header...last.end).last { Self.isEntry(lines[$0].content) } ?? last.header
    var added: [Line] = []
    for (key, value) in entries {
      let at = blocks.flatMap { Array($0.header...$0.end) }.filter { Self.kind(lines[$0].content) == .entry(key) }
      if at.isEmpty { added.append(entryLine(key, value)) }
      for i in at { lines[i].content = Self.replacingValue(of: lines[i].content, with: value) }
    }
    insert(added, after: lastEntry)
  }

  /// Removes every block of `group` with its leading comment; of the blank lines that separated
  /// it from its neighbours one run is kept (none at the start or end of the file).
  /// - Returns: false when the file has no such group.
  mutating func remove(group: String) -> Bool {
    let blocks = self.blocks(of: group)
    for block in blocks.reversed() {
      var left = Array(lines[..<block.start])
      var right = Array(lines[(block.end + 1)...])
      if !right.contains(where: { !Self.isBlank($0.content) }) {
        while let l = left.last, Self.isBlank(l.content) { left.removeLast() }
      } else if left.last.map({ Self.isBlank($0.content) }) ?? true {
        while let r = right.first, Self.isBlank(r.content) { right.removeFirst() }
      }
      lines = left + right
    }
    return !blocks.isEmpty
  }

  // MARK: blocks

  /// A group's block: `start` (its leading comment, or its header), `header`, `end` (its last line).
  struct Block {
    var start, header, end: Int
  }

  func blocks(of group: String) -> [Block] {
    let headers = lines.indices.filter { if case .header = Self.kind(lines[$0].content) { true } else { false } }
    return headers.enumerated().compactMap { n, h in
      guard Self.kind(lines[h].content) == .header(group) else { return nil }
      let limit = n + 1 < headers.count ? leadingCommentStart(headers[n + 1]) : lines.count
      var end = (h..<limit).last { Self.isEntry(lines[$0].content) } ?? h
      while end + 1 < limit, Self.kind(lines[end + 1].content) == .comment { end += 1 }
      return Block(start: leadingCommentStart(h), header: h, end: end)
    }
  }

  private func leadingCommentStart(_ header: Int) -> Int {
    var start = header
    while start > 0, Self.kind(lines[start - 1].content) == .comment { start -= 1 }
    return start
  }

  // MARK: lines

  private mutating func append(group: String, entries: [(key: String, value: [UInt8])]) {
    var new = [Line(content: Array("[\(group)]".utf8), end: newline)] + entries.map { entryLine($0.key, $0.value) }
    if let last = lines.last, !Self.isBlank(last.content) { new.insert(Line(content: [], end: newline), at: 0) }
    insert(new, after: lines.count - 1)
  }

  /// Inserts `new` after line `index` (-1: at the start), giving that line a line end if it had none.
  private mutating func insert(_ new: [Line], after index: Int) {
    guard !new.isEmpty else { return }
    if index >= 0 && lines[index].end.isEmpty { lines[index].end = newline }
    lines.insert(contentsOf: new, at: index + 1)
  }

  private func entryLine(_ key: String, _ value: [UInt8]) -> Line {
    Line(content: Array(key.utf8) + Array((spaced ? " = " : "=").utf8) + value, end: newline)
  }

  /// The line with what follows `=` and the white space after it replaced by `value`.
  private static func replacingValue(of line: [UInt8], with value: [UInt8]) -> [UInt8] {
    guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else { return line }
    var start = eq + 1
    while start < line.count, isSpace(line[start]) { start += 1 }
    return Array(line[..<start]) + value
  }

  // MARK: classification (gkeyfile.c: g_key_file_parse_line)

  static func kind(_ content: [UInt8]) -> Kind {
    let line = content.drop { isSpace($0) }
    guard let first = line.first else { return .blank }
    if first == UInt8(ascii: "#") { return .comment }
    if first == UInt8(ascii: "["), let close = line.firstIndex(of: UInt8(ascii: "]")),
      line[(close + 1)...].allSatisfy({ $0 == 0x20 || $0 == 0x09 })
    {
      return .header(String(decoding: line[(line.startIndex + 1)..<close], as: UTF8.self))
    }
    guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else { return .other }
    var keyEnd = eq
    while keyEnd > line.startIndex, isSpace(line[keyEnd - 1]) { keyEnd -= 1 }
    return .entry(String(decoding: line[..<keyEnd], as: UTF8.self))
  }

  static func isBlank(_ content: [UInt8]) -> Bool { kind(content) == .blank }
  static func isEntry(_ content: [UInt8]) -> Bool { if case .entry = kind(content) { true } else { false } }

  /// `g_ascii_isspace`: space, \t, \n, \v, \f, \r.
  private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }
}
