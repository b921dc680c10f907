import BrokerCore
import FoundationEssentials

/// An `application/x-www-form-urlencoded` reply body (GitHub's token and device endpoints answer
/// so unless asked for JSON: GitHub Docs, "Authorizing OAuth apps") as the JSON object of its
/// fields, so one reader (`JSONFields`) serves every reply: each name with its first value, as a
/// string (`JSONFields.int` reads numeric strings).
enum FormReply {
  /// The fields of `body` as JSON text; `body` unchanged when it is not UTF-8 or cannot be encoded.
  static func json(_ body: [UInt8]) -> [UInt8] {
    guard let text = String(validating: body, as: UTF8.self) else { return body }
    let fields = FormEncoding.parameters(text.trimmingSpaces()).compactMapValues(\.first)
    guard let data = try? JSONEncoder().encode(fields) else { return body }
    return Array(data)
  }
}
