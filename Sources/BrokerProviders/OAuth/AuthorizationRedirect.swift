import BrokerCore

/// What the redirect (or a pasted redirect URL) said, after checking `state` (RFC 6749 §4.1.2,
/// §10.12; bug-cases.md B26).
public enum RedirectVerdict: Sendable, Equatable {
  /// `state` matched and the provider sent a code; `issuer` is the RFC 9207 `iss` parameter, if any.
  case code(Secret, issuer: String? = nil)
  /// `state` matched and the provider sent an error (RFC 6749 §4.1.2.1).
  case error(AuthorizationErrorInfo)
  /// `state` is missing, different, or repeated: not the answer to this sign-in. Ignored.
  case foreign
  /// `state` matched but there is neither a code nor an error (or a parameter is repeated).
  case incomplete
}

/// An error the authorization endpoint sent back, safe to show: `error` is a code word,
/// `detail` the first line of `error_description` with token-like runs redacted.
public struct AuthorizationErrorInfo: Sendable, Equatable {
  public var error: String
  public var detail: String?
  public init(error: String, detail: String?) {
    self.error = error
    self.detail = detail
  }
}

/// Reads the redirect's query and binds it to the sign-in by `state`.
public enum AuthorizationRedirect {
  /// Checks a redirect query (`code=…&state=…`, still percent-encoded).
  public static func check(query: String, state expected: String) -> RedirectVerdict {
    let parameters = FormEncoding.parameters(query)
    guard let states = parameters["state"], states.count == 1, Secret(expected).matches(states[0]) else {
      return .foreign
    }
    if let errors = parameters["error"] {
      guard errors.count == 1 else { return .incomplete }
      let detail = parameters["error_description"]?.first.map { Redaction.firstLine($0, redacting: []) }
      return .error(AuthorizationErrorInfo(error: Redaction.codeWord(errors[0]), detail: detail.flatMap { $0.isEmpty ? nil : $0 }))
    }
    guard let codes = parameters["code"], codes.count == 1, !codes[0].isEmpty else { return .incomplete }
    let issuers = parameters["iss"] ?? []
    guard issuers.count <= 1 else { return .incomplete }
    return .code(Secret(codes[0]), issuer: issuers.first)
  }

  /// Checks what the user pasted: the whole redirect URL from the browser's address bar, or
  /// just its query. The fragment is ignored.
  public static func check(pasted text: String, state expected: String) -> RedirectVerdict {
    var s = Substring(text)
    if let hash = s.firstIndex(of: "#") { s = s[..<hash] }
    if let question = s.firstIndex(of: "?") {
      s = s[s.index(after: question)...]
    } else if !s.contains("=") {
      return .foreign
    }
    return check(query: String(s), state: expected)
  }
}
