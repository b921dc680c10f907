public import BrokerCore
internal import CLibsodium

/// The Argon2id limits of one store, recorded in its file header (protocols-2.md §4.2: never rely
/// on libsodium's constants to derive a key again).
public struct KDFParameters: Sendable, Equatable {
  /// `crypto_pwhash_SALTBYTES` (16) random bytes, new for every store.
  public var salt: [UInt8]
  /// Argon2id passes (`opslimit`).
  public var opsLimit: UInt32
  /// Argon2id memory in bytes (`memlimit`).
  public var memLimit: UInt64

  public init(salt: [UInt8], opsLimit: UInt32, memLimit: UInt64) {
    self.salt = salt
    self.opsLimit = opsLimit
    self.memLimit = memLimit
  }

  /// What a new store uses: libsodium's INTERACTIVE limits, 2 passes over 64 MiB (about 0.1 s
  /// here; 256 MiB could pass a container's memory limit).
  public static let defaultOpsLimit: UInt32 = 2
  public static let defaultMemLimit: UInt64 = 64 << 20
  /// The largest limits a file may ask for (libsodium's SENSITIVE): a hostile header must not
  /// exhaust memory or time.
  static let maxOpsLimit: UInt32 = 4
  static let maxMemLimit: UInt64 = 1 << 30
  static let saltBytes = 16

  /// Limits with a fresh random salt.
  public static func fresh(opsLimit: UInt32 = defaultOpsLimit, memLimit: UInt64 = defaultMemLimit) -> KDFParameters {
    KDFParameters(salt: Sodium.random(saltBytes), opsLimit: opsLimit, memLimit: memLimit)
  }

  /// True when libsodium accepts these limits and they are within the caps above.
  var isAcceptable: Bool {
    salt.count == Self.saltBytes && opsLimit >= 1 && opsLimit <= Self.maxOpsLimit && memLimit >= 8192
      && memLimit <= Self.maxMemLimit
  }
}

/// The 32-byte XChaCha20-Poly1305 key of an encrypted store, with the parameters it was derived
/// with, in memory locked with `sodium_mlock` (kept out of swap and core dumps) and zeroed by
/// `sodium_munlock` when the last reference goes. Never printed, never in an error.
public final class StoreKey: @unchecked Sendable {  // immutable after init; wraps C memory
  static let byteCount = 32
  let bytes: UnsafeMutableRawPointer
  /// The salt and limits the key came from (written into every header sealed with it).
  public let parameters: KDFParameters
  /// False when `sodium_mlock` failed (`RLIMIT_MEMLOCK`); the key is still zeroed when dropped.
  public let isLocked: Bool

  init(parameters: KDFParameters, fill: (UnsafeMutableRawPointer) -> Void) {
    bytes = UnsafeMutableRawPointer.allocate(byteCount: Self.byteCount, alignment: 16)
    isLocked = sodium_mlock(bytes, Self.byteCount) == 0
    self.parameters = parameters
    fill(bytes)
  }

  /// A key from its 64 lower-case hex digits (the agent's wire), or nil.
  public convenience init?(hex: [UInt8], parameters: KDFParameters) {
    guard hex.count == Self.byteCount * 2, parameters.isAcceptable else { return nil }
    var ok = true
    self.init(parameters: parameters) { out in
      for i in 0..<Self.byteCount {
        guard let hi = Self.nibble(hex[2 * i]), let lo = Self.nibble(hex[2 * i + 1]) else {
          ok = false
          return
        }
        out.storeBytes(of: hi << 4 | lo, toByteOffset: i, as: UInt8.self)
      }
    }
    if !ok { return nil }
  }

  deinit {
    if isLocked { _ = sodium_munlock(bytes, Self.byteCount) } else { sodium_memzero(bytes, Self.byteCount) }
    bytes.deallocate()
  }

  /// The key as 64 hex digits, for the one message that hands it to the agent. The caller zeroes
  /// the array once it is sent (`Sodium.zero`).
  public func hexDigits() -> [UInt8] {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8](repeating: 0, count: Self.byteCount * 2)
    for i in 0..<Self.byteCount {
      let b = bytes.load(fromByteOffset: i, as: UInt8.self)
      out[2 * i] = digits[Int(b >> 4)]
      out[2 * i + 1] = digits[Int(b & 15)]
    }
    return out
  }

  private static func nibble(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    default: return nil
    }
  }
}

/// libsodium, and nothing home-made: Argon2id (`crypto_pwhash`, `crypto_pwhash_ALG_ARGON2ID13`) and
/// XChaCha20-Poly1305 (`crypto_aead_xchacha20poly1305_ietf`) (protocols-2.md §4).
public enum Sodium {
  static let nonceBytes = 24
  static let tagBytes = 16
  private static let ready: Bool = sodium_init() >= 0

  /// Derives the store key from `passphrase` and zeroes `passphrase`. Runs Argon2id for about as
  /// long as the limits say (0.1 s for the defaults): call it off the cooperative pool.
  /// - Throws: `StoreError.crypto` when libsodium cannot start or the limits are out of range;
  ///   `.outOfMemory` (with an empty `path` and `room`: `KeyDerivation` names them) when Argon2id
  ///   could not allocate its work area (`crypto_pwhash` returned -1, protocols-2.md §4.2).
  public static func deriveKey(passphrase: inout [UInt8], parameters: KDFParameters) throws(StoreError) -> StoreKey {
    defer { zero(&passphrase) }
    guard ready, parameters.isAcceptable else { throw StoreError.crypto(detail: "it cannot derive a key with these limits") }
    var rc: Int32 = -1
    let length = UInt64(passphrase.count)
    if passphrase.isEmpty { passphrase = [0] }  // a valid pointer; `length` stays 0
    let key = StoreKey(parameters: parameters) { out in
      rc = passphrase.withUnsafeBufferPointer { pass in
        pass.withMemoryRebound(to: CChar.self) { pass in
          crypto_pwhash(
            out.assumingMemoryBound(to: UInt8.self), UInt64(StoreKey.byteCount), pass.baseAddress!, length,
            parameters.salt, UInt64(parameters.opsLimit), Int(parameters.memLimit), crypto_pwhash_ALG_ARGON2ID13)
        }
      }
    }
    guard rc == 0 else {
      throw StoreError.outOfMemory(path: "", neededMiB: parameters.memLimit >> 20, room: "", newStore: false)
    }
    return key
  }

  /// `plaintext` sealed under `key`: ciphertext followed by the 16-byte tag, `additionalData`
  /// authenticated with it.
  static func seal(_ plaintext: [UInt8], additionalData: [UInt8], nonce: [UInt8], key: StoreKey) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
    var length: UInt64 = 0
    _ = out.withUnsafeMutableBufferPointer { c in
      crypto_aead_xchacha20poly1305_ietf_encrypt(
        c.baseAddress!, &length, plaintext, UInt64(plaintext.count), additionalData, UInt64(additionalData.count), nil,
        nonce, key.bytes.assumingMemoryBound(to: UInt8.self))
    }
    return out
  }

  /// The plaintext, or nil when the tag does not verify (wrong key, any changed byte).
  static func open(_ ciphertext: [UInt8], additionalData: [UInt8], nonce: [UInt8], key: StoreKey) -> [UInt8]? {
    guard ciphertext.count >= tagBytes else { return nil }
    var out = [UInt8](repeating: 0, count: max(1, ciphertext.count - tagBytes))
    var length: UInt64 = 0
    let rc = out.withUnsafeMutableBufferPointer { m in
      crypto_aead_xchacha20poly1305_ietf_decrypt(
        m.baseAddress!, &length, nil, ciphertext, UInt64(ciphertext.count), additionalData,
        UInt64(additionalData.count), nonce, key.bytes.assumingMemoryBound(to: UInt8.self))
    }
    return rc == 0 ? Array(out.prefix(Int(length))) : nil
  }

  /// `count` bytes from libsodium's CSPRNG.
  static func random(_ count: Int) -> [UInt8] {
    precondition(ready, "libsodium did not initialise")
    var out = [UInt8](repeating: 0, count: count)
    out.withUnsafeMutableBytes { if let base = $0.baseAddress { randombytes_buf(base, $0.count) } }
    return out
  }

  /// Overwrites `bytes` with zeros (`sodium_memzero`, which the optimiser keeps).
  public static func zero(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { sodium_memzero(base, $0.count) } }
  }
}
