import BrokerCore

/// Makes provider-supplied text safe to show (bug-cases.md B29): providers may echo a refresh token,
/// device code or client secret in `error_description`.
enum Redaction {
  static let marker = "<redacted>"
  /// Runs of token characters at least this long are treated as tokens.
  static let tokenRunLength = 40

  /// The first line of `text` with every value of `secrets` (also as form-encoded), and anything that looks like a token,
  /// replaced by `<redacted>`; control characters dropped; at most `limit` characters.
  static func firstLine(_ text: String, redacting secrets: [String], limit: Int = 160) -> String {
    let line = text.prefix { !$0.isNewline }  // "\r\n" is one Character: compare by kind
    var out = String(line)
    // As sent (a form body, percent-encoded) as well as as-is: a proxy's page may echo the request.
    for s in secrets where !s.isEmpty {
      out = out.replacing(s, with: marker)
      out = out.replacing(FormEncoding.escape(s), with: marker)
    }
    out = redactTokenRuns(out)
    out = String(out.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) }
      .map(Character.init))
    out = out.trimmingSpaces()
    if out.count > limit { out = String(out.prefix(limit)) + "…" }
    return out
  }

  /// One line of a reply body that is not the server's JSON (a proxy's page), for `--verbose`
  /// (bug-cases-3.md X06 step 1): the first 4 KiB as UTF-8 (invalid bytes replaced), HTML tags
  /// dropped, every run of whitespace or control characters one space, then `firstLine` (secrets
  /// and token-like runs redacted, at most `limit` characters).
  static func bodyLine(_ body: [UInt8], redacting secrets: [String], limit: Int = 160) -> String {
    var text = ""
    var inTag = false
    var space = false
    for scalar in String(decoding: body.prefix(4096), as: UTF8.self).unicodeScalars {
      if inTag {
        inTag = scalar != ">"
        continue
      }
      if scalar == "<" {
        inTag = true
        space = true
      } else if scalar.properties.isWhitespace || scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
        space = true
      } else {
        if space && !text.isEmpty { text.append(" ") }
        space = false
        text.unicodeScalars.append(scalar)
      }
    }
    return firstLine(text, redacting: secrets, limit: limit)
  }

  /// Replaces runs of `[A-Za-z0-9-_.~+/=]` of `tokenRunLength` or more characters (JWTs, opaque
  /// tokens) by `<redacted>`.
  static func redactTokenRuns(_ text: String) -> String {
    var out = ""
    var run = ""
    func flush() {
      out += run.count >= tokenRunLength ? marker : run
      run = ""
    }
    for ch in text {
      if ch.isASCII && (ch.isLetter || ch.isNumber || "-_.~+/=".contains(ch)) {
        run.append(ch)
      } else {
        flush()
        out.append(ch)
      }
    }
    flush()
    return out
  }

  /// `value` if it is a plain OAuth code word (`[A-Za-z0-9_.:-]`, at most 64 characters) that
  /// holds none of `secrets`, else a neutral placeholder: the `error` field is shown verbatim, so it
  /// must not carry anything else.
  static func codeWord(_ value: String, redacting secrets: [String] = [], fallback: String = "unrecognised_error")
    -> String
  {
    let ok = !value.isEmpty && value.count <= 64
      && value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_.:-".contains($0)) }
      && !secrets.contains { !$0.isEmpty && (value.contains($0) || (value.count >= 8 && $0.contains(value))) }
    return ok ? value : fallback
  }

  /// `value` if it is a claims challenge that can be sent back as it came (OpenID Connect Core
  /// §5.5; Entra's `claims`): a JSON object's text of printable ASCII, at most 4096 characters,
  /// holding none of `secrets`; else nil.
  static func claims(_ value: String, redacting secrets: [String]) -> String? {
    let ok = value.count <= 4096 && value.hasPrefix("{") && value.hasSuffix("}")
      && value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7f }
      && !secrets.contains { !$0.isEmpty && value.contains($0) }
    return ok ? value : nil
  }
}
