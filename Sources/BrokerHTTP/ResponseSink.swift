import BrokerCore

/// Collects one response while libcurl runs; used on the transfer thread only.
final class ResponseSink {
  private(set) var headers: [HTTPHeader] = []
  private(set) var body: [UInt8] = []
  /// Set when the body passed `limit`; the transfer was then aborted.
  private(set) var tooLarge = false
  let limit: Int
  let cancel: CancelFlag

  init(limit: Int, cancel: CancelFlag) {
    self.limit = limit
    self.cancel = cancel
  }

  /// Appends body bytes; false (abort) once the body would pass `limit`.
  func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard body.count + bytes.count <= limit else {
      tooLarge = true
      return false
    }
    body.append(contentsOf: bytes)
    return true
  }

  /// Takes one raw header line as libcurl delivers it (status lines and the blank end line too).
  ///
  /// A status line starts a new block, so only the final response's headers are kept (not those of
  /// `100 Continue`, a proxy's `CONNECT` reply or an authentication round).
  func addHeaderLine(_ raw: String) {
    let line = raw.trimmingTrailing()
    if line.hasPrefix("HTTP/") {
      headers.removeAll()
      return
    }
    guard !line.isEmpty else { return }
    if line.first == " " || line.first == "\t" {
      // obs-fold (RFC 9112 §5.2): a continuation of the previous value.
      if var last = headers.popLast() {
        last.value += " " + line.trimmingLeading()
        headers.append(last)
      }
      return
    }
    guard let colon = line.firstIndex(of: ":") else { return }
    let name = String(line[..<colon])
    let value = String(line[line.index(after: colon)...]).trimmingLeading()
    headers.append(HTTPHeader(name, value))
  }
}

extension String {
  fileprivate func trimmingTrailing() -> String {
    var s = Substring(self)
    while let c = s.last, c == " " || c == "\t" || c == "\r" || c == "\n" || c == "\r\n" { s = s.dropLast() }
    return String(s)
  }
  fileprivate func trimmingLeading() -> String {
    String(drop(while: { $0 == " " || $0 == "\t" }))
  }
}
