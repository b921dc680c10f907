import BrokerCore

/// A request checked against policy before any libcurl call: what `EasyHandle` performs.
///
/// Building a plan does no I/O. It refuses non-http(s) URLs, plain `http://` to non-loopback
/// hosts, methods that are not HTTP tokens and header lines that would split the request.
struct RequestPlan: Sendable {
  enum Body: Sendable, Equatable {
    /// GET: no body.
    case none
    /// HEAD: no body sent, none read.
    case head
    /// A body sent with `Content-Length` (POST, or `customMethod` when set).
    case bytes([UInt8])
  }

  var url: String
  /// The host named in errors: lower-case, without brackets.
  var host: String
  var body: Body
  /// Set for methods other than GET, HEAD and POST.
  var customMethod: String?
  /// `Name: value` lines for the curl_slist; no CR, LF or NUL in any of them.
  var headerLines: [String]
  var userAgent: String
  /// Seconds, at least 1.
  var connectTimeout: Int
  /// Seconds, at least 1.
  var totalTimeout: Int
  /// Extra PEM bundles, read on the transfer thread.
  var caFiles: [String]
  /// Loopback hosts never go through a proxy from the environment.
  var bypassProxy: Bool
  /// The proxy for this URL (empty: none) and the hosts that bypass it, when given explicitly
  /// (`ProxySettings`); nil: libcurl reads the process environment.
  var proxy: (url: String, noProxy: String)?

  init(_ request: HTTPRequest, userAgent: String, proxies: ProxySettings? = nil) throws(HTTPError) {
    guard let endpoint = EndpointURL(request.url) else {
      throw .invalidURL(RequestPlan.redacted(request.url))
    }
    if endpoint.scheme == "http" && !endpoint.isLoopback {
      throw .insecureURL(host: endpoint.host)
    }
    let method = request.method.uppercased()
    guard !method.isEmpty, method.utf8.allSatisfy(RequestPlan.isTokenByte) else {
      throw .other(host: endpoint.host, detail: "the HTTP method is not a valid token")
    }
    if request.url.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) {
      throw .invalidURL(RequestPlan.redacted(request.url))
    }
    var lines: [String] = []
    for header in request.headers {
      guard !header.name.isEmpty, header.name.utf8.allSatisfy(RequestPlan.isTokenByte) else {
        throw .other(host: endpoint.host, detail: "a request header name is not a valid token")
      }
      guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
        throw .other(host: endpoint.host, detail: "request header '\(header.name)' holds a line break")
      }
      // "Name:" would make curl drop the header; "Name;" sends it with an empty value.
      lines.append(header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)")
    }
    // No "Expect: 100-continue" round trip on larger POSTs unless the caller asks for one.
    if !request.headers.contains(where: { $0.name.lowercased() == "expect" }) {
      lines.append("Expect:")
    }
    self.url = request.url
    self.host = endpoint.host
    switch method {
    case "GET": body = .none
    case "HEAD": body = .head
    default: body = .bytes(request.body)
    }
    customMethod = ["GET", "HEAD", "POST"].contains(method) ? nil : method
    headerLines = lines
    self.userAgent = userAgent
    connectTimeout = max(1, request.connectTimeout)
    totalTimeout = max(1, request.totalTimeout)
    caFiles = request.caFiles
    bypassProxy = endpoint.isLoopback
    proxy = proxies.map { ($0.proxy(scheme: endpoint.scheme), $0.noProxy) }
  }

  /// RFC 9110 `tchar`.
  static func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return Array("!#$%&'*+-.^_`|~".utf8).contains(b)
    }
  }

  /// `url` without its query, fragment or user info: safe to show in an error.
  static func redacted(_ url: String) -> String {
    var s = Substring(url)
    if let cut = s.firstIndex(where: { $0 == "?" || $0 == "#" }) { s = s[..<cut] }
    let authorityStart = s.firstRange(of: "://")?.upperBound ?? s.startIndex
    let authorityEnd = s[authorityStart...].firstIndex(of: "/") ?? s.endIndex
    if let at = s[authorityStart..<authorityEnd].lastIndex(of: "@") {
      s = Substring(String(s[..<authorityStart]) + String(s[s.index(after: at)...]))
    }
    return String(s.prefix(200))
  }
}
