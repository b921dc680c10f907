import BrokerCore
import FoundationEssentials

/// An OAuth error reply (RFC 6749 §5.2) with Microsoft's extra fields (protocols.md §2.7), reduced
/// to what is safe to show: no field here can hold a secret of the request.
struct OAuthErrorReply: Sendable, Equatable {
  /// The `error` code word (sanitised).
  var error: String
  /// `suberror` (Microsoft) or `error_subtype` (Google: `invalid_rapt`), sanitised.
  var suberror: String?
  /// `AADSTSnnnn` codes: from `error_codes`, else the leading code of `error_description`.
  var codes: [String]
  /// The numbers behind `codes`.
  var numericCodes: [Int]
  /// True when the reply carries a `claims` challenge (protocols.md §2.8).
  var hasClaims: Bool
  /// The challenge itself (a JSON object as text) when it can be sent back as it came: on the
  /// authorization request of the sign-in that satisfies it (`Redaction.claims`).
  var claims: String? = nil
  /// `interval` (seconds), which some servers add to `slow_down`.
  var interval: Int?
  /// The first line of `error_description` with the request's secrets redacted.
  var detailLine: String?
  /// The HTTP status it came with.
  var status: Int
  /// Seconds the reply's headers ask the client to wait (`ThrottleWait.seconds`), or nil.
  var retryAfter: Int? = nil

  /// What to show: `error[, suberror], AADSTS…` or, without codes, `error: first line`.
  var summary: String {
    var parts = [error]
    if let suberror { parts.append(suberror) }
    if !codes.isEmpty { return (parts + codes).joined(separator: ", ") }
    let head = parts.joined(separator: ", ")
    if let detailLine, !detailLine.isEmpty { return head + ": " + detailLine }
    return head
  }

  /// The AADSTS codes, else the redacted first line, else "": evidence for messages.
  var evidence: String {
    if !codes.isEmpty { return codes.joined(separator: ", ") }
    return detailLine ?? ""
  }

  /// Parses `body`; nil unless it is a JSON object with a string `error`.
  /// - Parameter secrets: every secret value the request carried, redacted from the description.
  static func parse(_ body: [UInt8], status: Int, secrets: [String]) -> OAuthErrorReply? {
    guard let b = JSONFields.parse(body), let error = b.string("error") else { return nil }
    let numbers = (b.ints("error_codes") ?? []).compactMap { $0 }.filter { $0 > 0 }
    let description = b.string("error_description")
    var codes = numbers.map { "AADSTS\($0)" }
    if codes.isEmpty, let d = description, let code = leadingAADSTS(d) { codes = [code] }
    return OAuthErrorReply(
      error: Redaction.codeWord(error, redacting: secrets),
      suberror: (b.string("suberror") ?? b.string("error_subtype")).map { Redaction.codeWord($0, redacting: secrets, fallback: "unrecognised") },
      codes: codes, numericCodes: numbers.isEmpty ? codes.compactMap { Int($0.dropFirst(6)) } : numbers,
      hasClaims: b.has("claims"), claims: b.string("claims").flatMap { Redaction.claims($0, redacting: secrets) },
      interval: b.int("interval"),
      detailLine: description.map { Redaction.firstLine($0, redacting: secrets) }, status: status)
  }

  /// `AADSTSnnnn` when `text` starts with it (after spaces).
  static func leadingAADSTS(_ text: String) -> String? {
    let t = text.trimmingSpaces()
    guard t.hasPrefix("AADSTS") else { return nil }
    let digits = t.dropFirst(6).prefix { $0.isASCII && $0.isNumber }
    return digits.isEmpty || digits.count > 9 ? nil : "AADSTS" + digits
  }
}
