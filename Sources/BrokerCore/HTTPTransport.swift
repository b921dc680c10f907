/// One HTTP header line. Its description shows the name only: values such as `Authorization` and
/// `Cookie` carry secrets.
public struct HTTPHeader: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
  public var name: String
  public var value: String
  public init(_ name: String, _ value: String) {
    self.name = name
    self.value = value
  }
  public var description: String { "\(name): <redacted>" }
  public var customMirror: Mirror { Mirror(self, children: ["name": name]) }
}

/// An HTTP request as the providers build it.
///
/// `url` must be `https://`, or `http://` for a loopback host (127.0.0.0/8, ::1, localhost);
/// transports refuse anything else with `HTTPError.insecureURL`. Its description shows the method
/// and the URL without its query: the body and headers may carry secrets.
public struct HTTPRequest: Sendable, CustomStringConvertible, CustomReflectable {
  public var method: String
  public var url: String
  public var headers: [HTTPHeader]
  /// The body bytes (may hold secrets: never log it).
  public var body: [UInt8]
  /// Seconds allowed to set up the connection (TCP + TLS).
  public var connectTimeout: Int
  /// Seconds allowed for the whole exchange.
  public var totalTimeout: Int
  /// Extra PEM CA bundles trusted in addition to the system ones. Verification is never off.
  public var caFiles: [String]

  public init(
    method: String, url: String, headers: [HTTPHeader] = [], body: [UInt8] = [],
    connectTimeout: Int = 10, totalTimeout: Int = 30, caFiles: [String] = []
  ) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.connectTimeout = connectTimeout
    self.totalTimeout = totalTimeout
    self.caFiles = caFiles
  }

  public var description: String {
    "\(method) \(url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url)"
  }
  public var customMirror: Mirror { Mirror(self, children: ["request": description]) }

  /// A `POST` of `application/x-www-form-urlencoded` fields (RFC 6749 §4.1.3 and others).
  public static func form(
    url: String, fields: [(String, String)], caFiles: [String] = [], totalTimeout: Int = 30
  ) -> HTTPRequest {
    HTTPRequest(
      method: "POST", url: url,
      headers: [
        HTTPHeader("Content-Type", "application/x-www-form-urlencoded"),
        HTTPHeader("Accept", "application/json"),
      ],
      body: Array(FormEncoding.encode(fields).utf8), totalTimeout: totalTimeout, caFiles: caFiles)
  }
}

/// An HTTP response: any status, headers in order, the raw body.
public struct HTTPResponse: Sendable {
  public var status: Int
  public var headers: [HTTPHeader]
  public var body: [UInt8]
  public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }
  /// The last header of that name, compared case-insensitively.
  public func header(_ name: String) -> String? {
    headers.last(where: { $0.name.lowercased() == name.lowercased() })?.value
  }
}

/// What failed below HTTP: each case names the host, never a URL query or a body.
public enum HTTPError: Error, Sendable, Equatable {
  /// The URL could not be parsed.
  case invalidURL(String)
  /// An `http://` URL for a host that is not loopback.
  case insecureURL(host: String)
  /// DNS failed for the host or the proxy.
  case cannotResolve(host: String)
  /// TCP connection refused or unreachable.
  case cannotConnect(host: String)
  /// TLS handshake or certificate verification failed.
  case tls(host: String, detail: String)
  /// The connect or total timeout passed.
  case timedOut(host: String)
  /// A configured extra CA file cannot be used: its path and why.
  case caFile(path: String, detail: String)
  /// Anything else libcurl reports.
  case other(host: String, detail: String)
  /// No request can be made: the HTTP library (libcurl, loaded at the first request) or one of
  /// its functions is missing, or it failed to initialise. `detail` is the loader's text, which
  /// names the file and the symbol.
  case libraryUnavailable(detail: String)
}

extension HTTPError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .invalidURL(let url): return "the URL '\(url)' cannot be parsed; check the endpoint in the config"
    case .insecureURL(let host):
      return "refusing plain http to '\(host)'; use an https:// endpoint (http:// is for loopback hosts only)"
    case .cannotResolve(let host): return "cannot resolve '\(host)'; check the network, DNS and proxy settings"
    case .cannotConnect(let host): return "cannot connect to '\(host)'; check the network and proxy settings"
    case .tls(let host, let detail):
      return "TLS verification failed for '\(host)' (\(detail)); check the system CA store or set ca-file"
    case .timedOut(let host): return "'\(host)' did not answer in time; try again later"
    case .caFile(let path, let detail):
      return "cannot use the CA file '\(path)' (\(detail)); fix the ca-file setting in the config"
    case .other(let host, let detail): return "request to '\(host)' failed (\(detail)); try again later"
    case .libraryUnavailable(let detail):
      return "could not load libcurl (\(detail)); install libcurl4 (Debian: apt-get install libcurl4)"
    }
  }
}

/// Sends HTTP requests. Implementations: `CurlTransport` (BrokerHTTP), fakes in BrokerTestSupport.
public protocol HTTPTransport: Sendable {
  /// Sends `request` and returns the response, whatever its status.
  /// - Throws: `HTTPError` when no HTTP response was received.
  func send(_ request: HTTPRequest) async throws -> HTTPResponse
  /// Where callers note what only they can judge safe to show (`--verbose`): off unless the
  /// transport is a `DiagnosedTransport`.
  var diagnostics: Diagnostics { get }
}

extension HTTPTransport {
  public var diagnostics: Diagnostics { .off }
}

/// `application/x-www-form-urlencoded` encoding (WHATWG URL §5.2).
public enum FormEncoding {
  public static func encode(_ fields: [(String, String)]) -> String {
    fields.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
  }
  /// Every name of a query or form body (`a=1&b=2&a=3`, still encoded) with all its values in
  /// order, each decoded as `decode` does; a pair without `=` has the value "".
  public static func parameters(_ text: String) -> [String: [String]] {
    var out: [String: [String]] = [:]
    for pair in text.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      out[decode(parts[0]), default: []].append(parts.count > 1 ? decode(parts[1]) : "")
    }
    return out
  }

  /// Decodes one component: `+` is a space and `%XX` a byte; a stray `%` stays as it is and
  /// invalid UTF-8 becomes U+FFFD (lenient, for replies and redirects; checks of untrusted input
  /// that must refuse malformed escapes do their own).
  public static func decode(_ s: Substring) -> String {
    var bytes: [UInt8] = []
    var rest = Array(s.utf8)[...]
    while let b = rest.popFirst() {
      if b == UInt8(ascii: "+") {
        bytes.append(UInt8(ascii: " "))
      } else if b == UInt8(ascii: "%"), rest.count >= 2,
        let v = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16)
      {
        bytes.append(v)
        rest = rest.dropFirst(2)
      } else {
        bytes.append(b)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Percent-encodes everything but `A-Z a-z 0-9 * - . _`, and space as `+`.
  public static func escape(_ s: String) -> String {
    var out = ""
    for b in s.utf8 {
      switch b {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"),
        UInt8(ascii: "."), UInt8(ascii: "_"):
        out.unicodeScalars.append(Unicode.Scalar(b))
      case UInt8(ascii: " "): out += "+"
      default:
        let hex = Array("0123456789ABCDEF".utf8)
        out += "%"
        out.unicodeScalars.append(Unicode.Scalar(hex[Int(b >> 4)]))
        out.unicodeScalars.append(Unicode.Scalar(hex[Int(b & 0xF)]))
      }
    }
    return out
  }
}
