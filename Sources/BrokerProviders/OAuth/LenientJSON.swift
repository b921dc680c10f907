import BrokerCore

/// One JSON object's fields, read leniently: a field that is absent, null or of another type than
/// asked reads as nil, so one odd field never spoils a whole reply (MSAL Python coerces string
/// `interval`s the same way). Every JSON reply and document the providers read goes through it:
/// token, device authorization and error replies, discovery documents, ID token claims, userinfo.
struct JSONFields: Decodable, Sendable {
  private var values: [String: JSONValue] = [:]

  /// `bytes` as a JSON object; nil when it is not one (not JSON, or an array, string or number).
  static func parse(_ bytes: [UInt8]) -> JSONFields? { JSONText.decode(JSONFields.self, bytes: bytes) }

  init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: AnyKey.self)
    for key in c.allKeys { values[key.stringValue] = (try? c.decode(JSONValue.self, forKey: key)) ?? .other }
  }

  /// The string `name`, or nil.
  func string(_ name: String) -> String? {
    if case .string(let s)? = values[name] { return s }
    return nil
  }

  /// The string `name` when it is not empty (an endpoint URL), or nil.
  func nonEmptyString(_ name: String) -> String? { string(name).flatMap { $0.isEmpty ? nil : $0 } }

  /// The integer `name`: a number (`5`, `5.0`) or numeric string (`"5"`), or nil.
  func int(_ name: String) -> Int? { values[name]?.lenientInt }

  /// The string `name`, or an integer's decimal digits (Google's `projectNumber` comes either
  /// way), or nil.
  func digits(_ name: String) -> String? {
    switch values[name] {
    case .string(let s)?: return s
    case .int(let i)?: return String(i)
    default: return nil
    }
  }

  /// The boolean `name`, or nil.
  func bool(_ name: String) -> Bool? {
    if case .bool(let b)? = values[name] { return b }
    return nil
  }

  /// The array `name` when every element is a string, or nil.
  func strings(_ name: String) -> [String]? {
    guard case .array(let items)? = values[name] else { return nil }
    var out: [String] = []
    for case .string(let s) in items { out.append(s) }
    return out.count == items.count ? out : nil
  }

  /// The array `name`, each element read as `int(_:)` (nil where it is not a number), or nil.
  func ints(_ name: String) -> [Int?]? {
    guard case .array(let items)? = values[name] else { return nil }
    return items.map(\.lenientInt)
  }

  /// True when `name` is present and not null.
  func has(_ name: String) -> Bool { values[name].map { $0 != .null } ?? false }

  private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }
}

/// One JSON value as far as the readers need it: objects are `.other`.
private enum JSONValue: Decodable, Sendable, Equatable {
  case null, bool(Bool), int(Int64), double(Double), string(String), array([JSONValue]), other

  init(from decoder: any Decoder) throws {
    let c = try decoder.singleValueContainer()
    if c.decodeNil() {
      self = .null
    } else if let b = try? c.decode(Bool.self) {
      self = .bool(b)
    } else if let i = try? c.decode(Int64.self) {
      self = .int(i)
    } else if let d = try? c.decode(Double.self) {
      self = .double(d)
    } else if let s = try? c.decode(String.self) {
      self = .string(s)
    } else if let a = try? c.decode([JSONValue].self) {
      self = .array(a)
    } else {
      self = .other
    }
  }

  /// The number, bounded to ±`OutsideTime.limit`: every integer a provider sends (lifetimes,
  /// intervals, claims, error codes) is far smaller, and a larger one must not overflow the
  /// arithmetic it goes into.
  var lenientInt: Int? {
    switch self {
    case .int(let i): return Int(exactly: i).map(OutsideTime.bounded)
    case .double(let d): return d.isFinite && abs(d) < 1e12 ? Int(d) : nil
    case .string(let s): return Int(s.trimmingSpaces()).map(OutsideTime.bounded)
    default: return nil
    }
  }
}
