/// A secret value (access token, refresh token, cookie, client secret, stored document) that never
/// prints itself.
///
/// `description`, `debugDescription` and reflection show `<redacted>`, so an accidental `print`, log
/// line or string interpolation leaks nothing. Read `revealed` only at the boundary that must send or
/// store the value.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// The raw value.
  public let revealed: String

  public init(_ value: String) { self.revealed = value }

  /// True when the value is the empty string (providers sometimes send `""` for "no token").
  public var isEmpty: Bool { revealed.isEmpty }

  public var description: String { "<redacted>" }
  public var debugDescription: String { "Secret(<redacted>, \(revealed.utf8.count) bytes)" }
  public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension Secret {
  /// True when `candidate` is exactly this value, compared without an early exit, so timing does
  /// not tell how much of a guess was right (exec's `IDENTITY_HEADER`, OAuth `state`, OpenID `nonce`).
  public func matches(_ candidate: String) -> Bool {
    let (x, y) = (Array(revealed.utf8), Array(candidate.utf8))
    var diff: UInt8 = x.count == y.count ? 0 : 1
    for i in 0..<min(x.count, y.count) { diff |= x[i] ^ y[i] }
    return diff == 0
  }
}
