/// The fields of the encrypted store's agent messages (`op=unlock`, `op=lock`, `op=store`;
/// interface.md §7.1): only the agent holds the key and touches `tokens.enc`, so the full program
/// reaches the store through these. Only the derived key travels (`unlock`), never the passphrase.
///
/// Replies are `AgentReply`s: `exit=0` with the answer as `out[]` lines, or a non-zero `exit`
/// with the error as `err[]` lines (`kind`, then its details).
public enum StoreMessage {
  /// Field keys.
  public enum Key {
    /// `store`: the operation (`StoreOperation`).
    public static let operation = "store-op"
    /// Every message: the encrypted file the caller means; an agent serving another one refuses.
    public static let path = "path"
    /// `store`: the item key, as the file store names it (`kind:account[:scopes]`).
    public static let item = "item"
    /// `store` save: the item's label.
    public static let label = "label"
    /// `store` save: the document.
    public static let secret = "secret"
    /// `store` keys: only this account's, when present.
    public static let account = "account"
    /// `unlock`: the derived key, 64 hex digits.
    public static let key = "key"
    /// `unlock`: the Argon2id salt (32 hex digits), passes and memory in bytes the key came from.
    public static let salt = "salt"
    public static let opsLimit = "ops"
    public static let memLimit = "mem"
    /// `unlock`: `1` to create the store (there is no file yet).
    public static let create = "create"
    /// `unlock`: seconds to keep the key (0: until the agent exits).
    public static let timeout = "timeout"
  }

  /// The `out[]` line of an `unlock` reply when the agent could not lock the key's memory
  /// (`sodium_mlock` failed at `RLIMIT_MEMLOCK`): it holds the key all the same.
  public static let keyNotLocked = "key-not-locked"

  /// The field's value in `fields`, or nil.
  public static func value(_ key: String, in fields: [CredentialField]) -> String? {
    fields.first { $0.key == key }?.value
  }

  /// `bytes` as lowercase hex digits (the `salt` field).
  public static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
  }

  /// The bytes of hex digits `hex`, or nil when they are not an even count of hex digits.
  public static func bytes(hex: String) -> [UInt8]? {
    let chars = Array(hex.utf8)
    guard chars.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    for i in stride(from: 0, to: chars.count, by: 2) {
      guard let byte = UInt8(String(decoding: chars[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
      out.append(byte)
    }
    return out
  }
}

/// What a `store` request asks.
public enum StoreOperation: String, Sendable, CaseIterable {
  case load, save, delete, keys
  /// Unlocked, and a save could succeed.
  case preflight
  /// The salt and limits in the file's header (to derive the key from a passphrase), or none.
  case parameters
}
