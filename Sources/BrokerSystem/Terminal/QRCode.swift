import CBrokerShims
import CLibqrencode

/// A QR code of a URL for the terminal, drawn with Unicode half blocks (two modules per
/// character row), dark modules as the terminal's foreground, with a quiet zone of two modules.
/// Encoding by libqrencode (ISO/IEC 18004), error correction level L, 8-bit mode.
public struct QRCode: Sendable, Equatable {
  /// Dark modules, row by row; `size` × `size`.
  public let modules: [[Bool]]
  public var size: Int { modules.count }

  /// Encodes `text`; nil when libqrencode cannot (too long, out of memory).
  public init?(_ text: String) {
    guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_L) else { return nil }
    defer { QRcode_free(code) }
    let width = Int(code.pointee.width)
    var rows: [[Bool]] = []
    for y in 0..<width {
      rows.append((0..<width).map { x in code.pointee.data[y * width + x] & 1 == 1 })
    }
    modules = rows
  }

  /// The terminal lines: light background drawn as foreground-coloured blocks would invert badly
  /// on dark themes, so dark modules are spaces and light ones are blocks (what `qrencode -t
  /// UTF8` does), which scans on both light and dark terminals.
  public func lines() -> [String] {
    let quiet = 2
    let n = size + 2 * quiet
    func light(_ x: Int, _ y: Int) -> Bool {
      let (mx, my) = (x - quiet, y - quiet)
      guard (0..<size).contains(mx), (0..<size).contains(my) else { return true }
      return !modules[my][mx]
    }
    var out: [String] = []
    var y = 0
    while y < n {
      var line = ""
      for x in 0..<n {
        switch (light(x, y), y + 1 < n ? light(x, y + 1) : true) {
        case (true, true): line += "█"
        case (true, false): line += "▀"
        case (false, true): line += "▄"
        case (false, false): line += " "
        }
      }
      out.append(line)
      y += 2
    }
    return out
  }

  /// Columns needed to draw it.
  public var columns: Int { size + 4 }
}

/// The terminal's width in columns, or nil when `fd` is not a terminal.
public func terminalColumns(fd: Int32) -> Int? {
  let n = cbroker_terminal_columns(fd)
  return n > 0 ? Int(n) : nil
}
