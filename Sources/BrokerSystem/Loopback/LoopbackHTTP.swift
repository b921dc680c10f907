import BrokerCore

/// One request the loopback listener received: the request line and the `Host` header, nothing
/// else (RFC 9112 §3). The target may hold an authorization code: never log it.
public struct LoopbackRequest: Sendable, Equatable {
  /// `GET`, `HEAD`, … as sent.
  public var method: String
  /// The path, without the query (`/`, `/favicon.ico`).
  public var path: String
  /// The raw query after `?` (still percent-encoded), or "" when there is none.
  public var query: String
  /// The `Host` header, lower-cased, or nil when absent.
  public var host: String?
  /// Every header by lower-cased name, values trimmed; a repeated name's values joined with ", "
  /// (RFC 9110 §5.3), so a repeated secret header never equals the secret.
  public var headers: [String: String]

  public init(method: String, path: String, query: String, host: String?, headers: [String: String] = [:]) {
    self.method = method
    self.path = path
    self.query = query
    self.host = host
    self.headers = headers
  }

  /// The value of header `name` (any case), or nil.
  public func header(_ name: String) -> String? { headers[name.lowercased()] }

  /// Parses the head of an HTTP/1.x request (everything up to the blank line).
  /// - Returns: nil when the request line is malformed or the head has more than one `Host`.
  static func parse(head: [UInt8]) -> LoopbackRequest? {
    let text = String(decoding: head, as: UTF8.self)
    let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
    guard let first = lines.first else { return nil }
    let parts = first.split(separator: " ", omittingEmptySubsequences: true)
    guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), parts[1].hasPrefix("/") else { return nil }
    var target = parts[1]
    if let hash = target.firstIndex(of: "#") { target = target[..<hash] }
    let path: Substring
    let query: Substring
    if let q = target.firstIndex(of: "?") {
      path = target[..<q]
      query = target[target.index(after: q)...]
    } else {
      path = target
      query = ""
    }
    var host: String?
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let name = line[..<colon].lowercased()
      let value = String(line[line.index(after: colon)...]).trimmingSpaces()
      headers[name] = headers[name].map { $0 + ", " + value } ?? value
      if name == "host" {
        guard host == nil else { return nil }  // more than one Host: 400 (RFC 9112 §3.2)
        host = value.lowercased()
      }
    }
    return LoopbackRequest(
      method: String(parts[0]), path: String(path), query: String(query), host: host, headers: headers)
  }
}

/// What the listener answers to one request, and whether that request ends the wait.
public struct LoopbackReply<Result: Sendable>: Sendable {
  /// HTTP status: 200, 400, 404, 405.
  public var status: Int
  /// A complete HTML page (see `LoopbackPage`).
  public var page: String
  /// Non-nil: the wait is over with this result; the listener closes after sending the page.
  public var result: Result?

  public init(status: Int, page: String, result: Result? = nil) {
    self.status = status
    self.page = page
    self.result = result
  }
}

enum LoopbackWire {
  /// Requests whose head is longer than this are refused (431) and closed.
  static let maxHead = 16 * 1024

  static func reason(_ status: Int) -> String {
    switch status {
    case 200: return "OK"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 405: return "Method Not Allowed"
    case 413: return "Content Too Large"
    case 431: return "Request Header Fields Too Large"
    case 500: return "Internal Server Error"
    case 502: return "Bad Gateway"
    case 503: return "Service Unavailable"
    default: return "Error"
    }
  }

  /// A whole HTTP/1.1 response, the connection closed after it: the status line, `Content-Type`,
  /// `Content-Length`, `headers` in order, `Cache-Control: no-store`, `X-Content-Type-Options:
  /// nosniff`, `Connection: close`; then the body, unless `includeBody` is false (`HEAD`).
  static func response(
    status: Int, contentType: String, headers: [(name: String, value: String)] = [], body: [UInt8],
    includeBody: Bool = true
  ) -> [UInt8] {
    var head = "HTTP/1.1 \(status) \(reason(status))\r\n"
    head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n"
    for h in headers { head += "\(h.name): \(h.value)\r\n" }
    head += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
    return Array(head.utf8) + (includeBody ? body : [])
  }

  /// The redirect listener's HTML page: no referrer (the page's URL held the code), no script.
  static func response(status: Int, page: String, includeBody: Bool = true) -> [UInt8] {
    response(
      status: status, contentType: "text/html; charset=utf-8",
      headers: [
        ("Referrer-Policy", "no-referrer"), ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"),
      ], body: Array(page.utf8), includeBody: includeBody)
  }

  /// Cuts a request head out of the bytes a `PollServer` read so far: complete up to and with
  /// its blank line, too large past `maxHead` bytes without one (answer 431), closed when the
  /// peer ended before it.
  static func frameHead(_ bytes: [UInt8], ended: Bool) -> PollFrame {
    if let end = headEnd(bytes), end <= maxHead { return .complete(Array(bytes[0..<end])) }
    if bytes.count > maxHead { return .tooLarge }
    return ended ? .closed : .more
  }

  /// The index just past the `\r\n\r\n` that ends the head, or nil.
  static func headEnd(_ buffer: [UInt8]) -> Int? {
    guard buffer.count >= 4 else { return nil }
    for i in 3..<buffer.count
    where buffer[i] == 10 && buffer[i - 1] == 13 && buffer[i - 2] == 10 && buffer[i - 3] == 13 {
      return i + 1
    }
    return nil
  }
}
