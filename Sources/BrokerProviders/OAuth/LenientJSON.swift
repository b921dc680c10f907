import BrokerCore

/// A JSON number or numeric string (`5`, `5.0`, `"5"`); `value` is nil for anything else, so one odd
/// field never spoils a whole reply (MSAL Python coerces string `interval`s the same way).
struct LenientInt: Decodable, Sendable {
  var value: Int?

  init(from decoder: any Decoder) throws {
    let c = try decoder.singleValueContainer()
    if let i = try? c.decode(Int.self) {
      value = i
    } else if let d = try? c.decode(Double.self), d.isFinite, abs(d) < 1e12 {
      value = Int(d)
    } else if let s = try? c.decode(String.self) {
      value = Int(s.trimmingSpaces())
    } else {
      value = nil
    }
  }
}

extension KeyedDecodingContainer {
  /// The string at `key`, or nil when absent, null or not a string.
  func lenientString(_ key: Key) -> String? { (try? decodeIfPresent(String.self, forKey: key)) ?? nil }
  /// The integer at `key` (number or numeric string), or nil.
  func lenientInt(_ key: Key) -> Int? { ((try? decodeIfPresent(LenientInt.self, forKey: key)) ?? nil)?.value }
}
