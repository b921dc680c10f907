/// One attribute of a credential message: `key=value`.
public struct CredentialField: Sendable, Hashable {
  public var key: String
  public var value: String
  public init(_ key: String, _ value: String) {
    self.key = key
    self.value = value
  }
}

/// A decoded credential description (git's credential protocol, reference: git `credential.c`), also
/// the framing of agent requests and replies.
public struct CredentialMessage: Sendable, Equatable {
  /// The fields in the order received; multi-valued `key[]` fields appear once per value.
  public private(set) var fields: [CredentialField] = []

  public init(_ fields: [CredentialField] = []) {
    for f in fields { append(f) }
  }

  /// The value of a single-valued key, or nil when absent.
  public func value(_ key: String) -> String? { fields.first { $0.key == key }?.value }

  /// The values of a multi-valued key (`name` without or with the `[]` suffix).
  public func values(_ key: String) -> [String] {
    let k = key.isListKey ? key : key + "[]"
    return fields.filter { $0.key == k }.map(\.value)
  }

  /// Appends a field; an empty value for a `key[]` clears that list (git's rule).
  public mutating func append(_ field: CredentialField) {
    if field.key.isListKey && field.value.isEmpty {
      fields.removeAll { $0.key == field.key }
    } else {
      fields.append(field)
    }
  }
}

/// Why a credential message was refused. Messages name the line and key, never a value (values may
/// be passwords or tokens).
public enum CredentialCodecError: Error, Sendable, Equatable, CustomStringConvertible {
  case nulByte(line: Int)
  case carriageReturn(line: Int)
  case lineTooLong(line: Int)
  case missingEquals(line: Int)
  case emptyKey(line: Int)
  case repeatedKey(String, line: Int)
  case invalidUTF8(line: Int)
  case messageTooLarge
  /// Encoding: a value (or key) holds LF, CR or NUL, or a key holds `=`.
  case unencodable(key: String)

  public var description: String {
    switch self {
    case .nulByte(let n): return "line \(n) contains a NUL byte"
    case .carriageReturn(let n): return "line \(n) contains a carriage return that does not end the line"
    case .lineTooLong(let n): return "line \(n) is longer than \(CredentialCodec.maxLineBytes) bytes"
    case .missingEquals(let n): return "line \(n) has no '='"
    case .emptyKey(let n): return "line \(n) has an empty key"
    case .repeatedKey(let k, let n): return "line \(n) repeats the single-valued key '\(k)'"
    case .invalidUTF8(let n): return "line \(n) is not valid UTF-8"
    case .messageTooLarge: return "the request is larger than \(CredentialCodec.maxMessageBytes) bytes"
    case .unencodable(let k): return "the value of '\(k)' contains a line break or NUL"
    }
  }
}

/// The `key=value` line codec of git's credential protocol (protocols.md §1.2, §1.7),
/// shared by the git helper and the agent socket.
///
/// Decoding splits only on LF (0x0A) and strips one CR directly before an LF; any other CR, any NUL,
/// a line over 65535 bytes, a line without `=`, invalid UTF-8 or a repeated single-valued key makes
/// the whole message invalid (CVE-2020-5260, CVE-2024-52006). A blank line or the end of input ends
/// the message. Encoding refuses LF, CR and NUL in any key or value.
public enum CredentialCodec {
  /// The longest line accepted, in bytes, including its LF (git ≥ 2.46 documents this limit).
  public static let maxLineBytes = 65535
  /// The largest message accepted, in bytes.
  public static let maxMessageBytes = 1 << 20

  /// Decodes one message from `bytes`.
  /// - Throws: `CredentialCodecError` for any malformed line.
  public static func decode(_ bytes: [UInt8]) throws(CredentialCodecError) -> CredentialMessage {
    var message = CredentialMessage()
    for field in try decodeFields(bytes) { message.append(field) }
    return message
  }

  /// The fields of one message in order, with the checks of `decode(_:)`, but an empty value of a
  /// `key[]` field kept as a value (the agent's `in[]`/`out[]` lines may be empty).
  /// - Throws: `CredentialCodecError` for any malformed line.
  static func decodeFields(_ bytes: [UInt8]) throws(CredentialCodecError) -> [CredentialField] {
    guard bytes.count <= maxMessageBytes else { throw .messageTooLarge }
    var fields: [CredentialField] = []
    var seen = SingleValuedKeys()
    var start = 0
    var lineNumber = 0
    while start < bytes.count {
      lineNumber += 1
      let newline = bytes[start...].firstIndex(of: 0x0A)
      let end = newline ?? bytes.count
      if end - start + (newline == nil ? 0 : 1) > maxLineBytes { throw .lineTooLong(line: lineNumber) }
      var line = bytes[start..<end]
      start = end + 1
      if newline != nil, line.last == 0x0D { line = line.dropLast() }
      if line.isEmpty { break }
      if line.contains(0x00) { throw .nulByte(line: lineNumber) }
      if line.contains(0x0D) { throw .carriageReturn(line: lineNumber) }
      guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else { throw .missingEquals(line: lineNumber) }
      guard eq > line.startIndex else { throw .emptyKey(line: lineNumber) }
      guard let key = String(validating: line[line.startIndex..<eq], as: UTF8.self),
        let value = String(validating: line[(eq + 1)...], as: UTF8.self)
      else { throw .invalidUTF8(line: lineNumber) }
      if !key.isListKey && !seen.insert(key) { throw .repeatedKey(key, line: lineNumber) }
      fields.append(CredentialField(key, value))
    }
    return fields
  }

  /// The single-valued keys seen so far: a list while they are few (every real message), a Set
  /// past that. A Set from the first key costs the front a run-time metadata instantiation and a
  /// scan of every protocol conformance in the binary (Hashable), more than the rest of its call.
  struct SingleValuedKeys {
    static let listed = 16
    private var list: [String] = []
    private var set = Set<String>()

    /// False when `key` was already there.
    mutating func insert(_ key: String) -> Bool {
      if list.count < Self.listed {
        if list.contains(key) { return false }
        list.append(key)
        return true
      }
      if set.isEmpty { set = Set(list) }
      return set.insert(key).inserted
    }
  }

  /// Encodes `fields` as `key=value` lines, each ended by LF (no terminating blank line).
  /// - Throws: `CredentialCodecError.unencodable` when a key or value holds LF, CR or NUL (or a key
  ///   holds `=`), and `.lineTooLong` past 65535 bytes.
  public static func encode(_ fields: [CredentialField]) throws(CredentialCodecError) -> [UInt8] {
    var out: [UInt8] = []
    for (i, f) in fields.enumerated() {
      let bad: (UInt8) -> Bool = { $0 == 0x0A || $0 == 0x0D || $0 == 0x00 }
      if f.key.isEmpty || f.key.utf8.contains(where: { bad($0) || $0 == UInt8(ascii: "=") })
        || f.value.utf8.contains(where: bad)
      {
        throw .unencodable(key: f.key.utf8.contains(where: bad) ? "?" : f.key)
      }
      let count = f.key.utf8.count + 1 + f.value.utf8.count + 1
      if count > maxLineBytes { throw .lineTooLong(line: i + 1) }
      out.append(contentsOf: f.key.utf8)
      out.append(UInt8(ascii: "="))
      out.append(contentsOf: f.value.utf8)
      out.append(0x0A)
    }
    return out
  }
}

extension String {
  /// True when the key ends with `[]` (a multi-valued key), byte for byte as git's `ends_with`:
  /// not `hasSuffix`, whose comparison by Character costs the front grapheme-boundary code
  /// (pages of the standard library it touches nowhere else) for every line it decodes.
  var isListKey: Bool {
    let bytes = utf8
    guard bytes.count >= 2 else { return false }
    let last = bytes.index(before: bytes.endIndex)
    return bytes[last] == UInt8(ascii: "]") && bytes[bytes.index(before: last)] == UInt8(ascii: "[")
  }
}
