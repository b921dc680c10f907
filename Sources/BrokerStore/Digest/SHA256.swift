internal import CLibsecret

/// SHA-256 through GLib's `GChecksum` (`G_CHECKSUM_SHA256`), for the PKCE `S256` code challenge
/// (RFC 7636 §4.2).
public enum SHA256 {
  /// The 32-byte SHA-256 digest of `bytes`.
  public static func digest(_ bytes: [UInt8]) -> [UInt8] {
    guard let checksum = g_checksum_new(G_CHECKSUM_SHA256) else { preconditionFailure("GLib has no SHA-256") }
    defer { g_checksum_free(checksum) }
    bytes.withUnsafeBufferPointer { g_checksum_update(checksum, $0.baseAddress, gssize($0.count)) }
    var digest = [UInt8](repeating: 0, count: 32)
    var length = gsize(digest.count)
    g_checksum_get_digest(checksum, &digest, &length)
    return Array(digest[0..<Int(length)])
  }

  /// The digest of the UTF-8 bytes of `text`.
  public static func digest(_ text: String) -> [UInt8] { digest(Array(text.utf8)) }
}
