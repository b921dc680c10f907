import FoundationEssentials

/// A `Bearer` challenge of a `WWW-Authenticate` value (RFC 6750 §3; RFC 7235 §2.1 syntax:
/// `Bearer` then comma-separated `name=token` or `name="quoted string"` auth-params), as git 2.41+
/// hands helpers each header value in `wwwauth[]` (interface.md §4).
///
/// What tokenbroker reads from it: Azure DevOps's `authorization_uri`
/// (`https://login.microsoftonline.com/TENANT`: the tenant the resource wants) and a claims
/// challenge (`error="insufficient_claims"` with `claims`, base64 or JSON: Conditional Access,
/// continuous access evaluation). A value that does not parse is ignored, never an error.
public struct BearerChallenge: Sendable, Equatable {
  /// Auth-param names lower-cased (they are case-insensitive), values unquoted.
  public var parameters: [String: String]

  public init(parameters: [String: String]) { self.parameters = parameters }

  /// The `Bearer` challenges in `value` (a header value may hold several challenges); none when it
  /// holds no Bearer challenge or does not parse.
  public static func parse(_ value: String) -> [BearerChallenge] {
    var scanner = Scanner(Array(value.unicodeScalars))
    var out: [BearerChallenge] = []
    while true {
      scanner.skip(", \t")
      guard let scheme = scanner.token() else { return scanner.atEnd ? out : [] }
      var params: [String: String] = [:]
      while true {
        scanner.skip(" \t")
        let mark = scanner.position
        guard let name = scanner.token() else { break }
        scanner.skip(" \t")
        guard scanner.take("=") else {
          scanner.position = mark  // the next challenge's scheme
          break
        }
        scanner.skip(" \t")
        scanner.isValueContext = true
        let value = scanner.quoted() ?? scanner.token()
        scanner.isValueContext = false
        guard let v = value else { return [] }
        params[name.lowercased()] = v
        scanner.skip(" \t")
        guard scanner.take(",") || scanner.atEnd else { return [] }
      }
      if scheme.lowercased() == "bearer" { out.append(BearerChallenge(parameters: params)) }
      if scanner.atEnd { return out }
    }
  }

  /// The tenant `authorization_uri` names (its first path segment, a GUID, lower-cased), or nil
  /// when it names none: `common`, `organizations`, `consumers`, and the all-zero GUID, which
  /// Azure DevOps reports for organisations of personal Microsoft accounts (no Entra tenant).
  public var tenant: String? {
    guard let uri = parameters["authorization_uri"], let url = EndpointURL(uri) else { return nil }
    let first = (url.path.split(separator: "/").first.map(String.init) ?? "").lowercased()
    return Self.isGUID(first) && first != Self.noTenant ? first : nil
  }

  /// The all-zero GUID: no tenant.
  static let noTenant = "00000000-0000-0000-0000-000000000000"

  /// The claims of an `insufficient_claims` challenge as JSON text (decoded from base64 or
  /// base64url when not JSON already), or nil when this is not one or they are not a JSON object.
  public var claims: String? {
    guard parameters["error"] == "insufficient_claims", let raw = parameters["claims"]?.trimmingSpaces(), !raw.isEmpty
    else { return nil }
    var json = raw
    if !raw.hasPrefix("{") {
      var b64 = raw.replacingOccurrences("-", "+").replacingOccurrences("_", "/")
      while b64.count % 4 != 0 { b64 += "=" }
      guard let data = Data(base64Encoded: b64), let text = String(validating: Array(data), as: UTF8.self) else {
        return nil
      }
      json = text.trimmingSpaces()
    }
    guard json.hasPrefix("{"), json.hasSuffix("}"),
      !json.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
    else { return nil }
    return json
  }

  static func isGUID(_ s: String) -> Bool {
    let parts = s.split(separator: "-", omittingEmptySubsequences: false)
    return parts.map(\.count) == [8, 4, 4, 4, 12] && parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
  }

  /// RFC 7230 §3.2.6 tokens and quoted strings over unicode scalars.
  private struct Scanner {
    let text: [Unicode.Scalar]
    var position = 0
    init(_ text: [Unicode.Scalar]) { self.text = text }
    var atEnd: Bool { position >= text.count }

    mutating func skip(_ set: String) {
      while position < text.count, set.unicodeScalars.contains(text[position]) { position += 1 }
    }
    mutating func take(_ c: Unicode.Scalar) -> Bool {
      guard position < text.count, text[position] == c else { return false }
      position += 1
      return true
    }
    /// tchar: `!#$%&'*+-.^_`|~`, digits, letters; also `/` and `=` after the first character, so
    /// that token68-like values (base64 claims, URIs sent unquoted) read as one value.
    mutating func token() -> String? {
      let start = position
      while position < text.count {
        let c = text[position]
        let ok = (c.properties.isAlphabetic && c.isASCII) || ("0"..."9").contains(c) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(c)
          || (position > start && (c == "/" || c == ":" || (c == "=" && isValueContext)))
        guard ok else { break }
        position += 1
      }
      return position > start ? String(String.UnicodeScalarView(text[start..<position])) : nil
    }
    /// Set while reading a value, where `=` padding may end a token68.
    var isValueContext = false
    mutating func quoted() -> String? {
      guard take("\"") else { return nil }
      var out = String.UnicodeScalarView()
      while position < text.count {
        let c = text[position]
        position += 1
        if c == "\"" { return String(out) }
        if c == "\\", position < text.count {
          out.append(text[position])
          position += 1
        } else {
          out.append(c)
        }
      }
      return nil  // unterminated
    }
  }
}

extension String {
  fileprivate func replacingOccurrences(_ a: Character, _ b: Character) -> String {
    String(map { $0 == a ? b : $0 })
  }
}
