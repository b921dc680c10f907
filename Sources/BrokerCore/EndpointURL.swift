/// The parts of an `http(s)://` URL that policy needs: scheme, host, port, path.
public struct EndpointURL: Sendable, Equatable {
  public var scheme: String
  /// Lower-cased host without brackets (`::1` for `[::1]`).
  public var host: String
  public var port: Int?
  /// `host[:port]` as written (brackets kept).
  public var authority: String
  /// The path and query after the authority ("" when none).
  public var path: String

  /// Parses `url`; nil unless it is `http://` or `https://` with a non-empty host and no user info.
  public init?(_ url: String) {
    let lower = url.lowercased()
    let scheme: String
    if lower.hasPrefix("https://") { scheme = "https" } else if lower.hasPrefix("http://") { scheme = "http" } else { return nil }
    let rest = url.dropFirst(scheme.count + 3)
    let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
    let authority = String(rest[..<end])
    guard !authority.isEmpty, !authority.contains("@"), !authority.contains(where: { $0.isWhitespace }) else { return nil }
    var host = authority
    var port: Int?
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else { return nil }
      host = String(authority[authority.index(after: authority.startIndex)..<close])
      let after = authority[authority.index(after: close)...]
      if after.hasPrefix(":") { port = Int(after.dropFirst()) ; if port == nil { return nil } }
      else if !after.isEmpty { return nil }
    } else if let colon = authority.lastIndex(of: ":") {
      host = String(authority[..<colon])
      guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else { return nil }
      port = p
    }
    guard !host.isEmpty else { return nil }
    self.scheme = scheme
    self.host = host.lowercased()
    self.port = port
    self.authority = authority
    self.path = String(rest[end...])
  }

  /// True for 127.0.0.0/8, ::1 and localhost.
  public var isLoopback: Bool { EndpointURL.isLoopbackHost(host) }

  public static func isLoopbackHost(_ host: String) -> Bool {
    let h = host.lowercased()
    if h == "localhost" || h == "::1" { return true }
    let parts = h.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
  }
}
