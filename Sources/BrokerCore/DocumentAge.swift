/// How new a stored document is, by what tokenbroker writes into it at each save (interface.md
/// §7): `obtained_at` (Unix seconds), then `rotations` (refresh-token documents: the rotations
/// since the sign-in, so a token rotated within the second it was obtained still comes after its
/// predecessor), then `expires_on` (Unix seconds: access tokens and cookies).
///
/// A store that finds two items with one key (a crash between writing the new item and deleting
/// the old, or a reader between the two) keeps the newer by this order; D-Bus paths and the
/// Secret Service's `Modified` (whole seconds) say nothing reliable about it (KeePassXC names its
/// items by UUID).
public struct DocumentAge: Comparable, Sendable {
  public let obtainedAt: Int64
  public let rotations: Int
  public let expiresOn: Int64

  /// The age of `bytes` (a stored JSON document), or nil when it has neither `obtained_at` nor
  /// `expires_on` (not a document of ours, or unreadable).
  public init?(document bytes: [UInt8]) {
    struct Fields: Decodable {
      var obtained_at: Int64?
      var rotations: Int?
      var expires_on: Int64?
    }
    guard let f = JSONText.decode(Fields.self, bytes: bytes), f.obtained_at != nil || f.expires_on != nil else {
      return nil
    }
    obtainedAt = f.obtained_at ?? .min
    rotations = f.rotations ?? 0
    expiresOn = f.expires_on ?? .min
  }

  public static func < (a: DocumentAge, b: DocumentAge) -> Bool {
    (a.obtainedAt, a.rotations, a.expiresOn) < (b.obtainedAt, b.rotations, b.expiresOn)
  }

  /// Whether this document was written after `other` by what both say: a later `obtained_at`, or
  /// more rotations; `expires_on` decides only where neither has an `obtained_at`. A writer keeps
  /// another item only when it is newer so: two access tokens obtained in the same second are
  /// alike, and the one just written stands (a `--force-refresh` within the second of the token
  /// it replaces, whose new token the provider gave a shorter lifetime, would otherwise lose to
  /// the old one, and every later call would get the token the refresh was meant to replace).
  public func isNewer(than other: DocumentAge) -> Bool {
    if (obtainedAt, rotations) != (other.obtainedAt, other.rotations) {
      return (obtainedAt, rotations) > (other.obtainedAt, other.rotations)
    }
    return obtainedAt == .min && expiresOn > other.expiresOn
  }
}
