/// The bytes of `tokens.enc` (interface.md §7.1; the layout of protocols-2.md §4.5):
///
/// ```
/// offset size  field
/// 0      8     magic "TBKSTOR\0"
/// 8      1     format version (1)
/// 9      1     kdf id (2 = crypto_pwhash_ALG_ARGON2ID13)
/// 10     2     reserved (0)
/// 12     4     Argon2id opslimit (u32, little-endian)
/// 16     8     Argon2id memlimit in bytes (u64 LE)
/// 24     16    salt
/// 40     1     aead id (1 = crypto_aead_xchacha20poly1305_ietf)
/// 41     24    nonce (new on every write)
/// 65     …     ciphertext || 16-byte tag; additional data: bytes 0..<65 (the whole header)
/// ```
///
/// The plaintext is the file store's document, `{"items":{KEY:DOCUMENT,…},"v":1}`.
enum EncryptedFileFormat {
  static let magic: [UInt8] = Array("TBKSTOR".utf8) + [0]
  static let version: UInt8 = 1
  static let kdfArgon2id13: UInt8 = 2
  static let aeadXChaCha20Poly1305: UInt8 = 1
  static let headerBytes = 65

  /// Why a file cannot be opened, before or at the key. Never carries content.
  enum Problem: Error, Equatable {
    /// Shorter than a header and a tag.
    case truncated
    /// Another magic, version or algorithm.
    case foreign
    /// Argon2id limits outside `KDFParameters`' caps (a hostile or damaged header): refused
    /// before anything is allocated (bug-cases-3.md X15).
    case limits(opsLimit: UInt64, memLimit: UInt64)
    /// The tag does not verify: wrong key, or changed bytes.
    case unauthenticated
  }

  /// The parsed header: the KDF parameters and this write's nonce.
  struct Header: Equatable {
    var parameters: KDFParameters
    var nonce: [UInt8]

    var bytes: [UInt8] {
      var out = magic + [version, kdfArgon2id13, 0, 0]
      out += littleEndian(UInt64(parameters.opsLimit), count: 4)
      out += littleEndian(parameters.memLimit, count: 8)
      out += parameters.salt + [aeadXChaCha20Poly1305] + nonce
      return out
    }
  }

  /// Reads only the header (checked before any key is derived).
  static func header(of file: [UInt8]) throws(Problem) -> Header {
    guard file.count >= headerBytes + Sodium.tagBytes else {
      throw file.starts(with: magic.prefix(min(file.count, magic.count))) ? .truncated : .foreign
    }
    guard file.starts(with: magic), file[8] == version, file[9] == kdfArgon2id13, file[10] == 0, file[11] == 0,
      file[40] == aeadXChaCha20Poly1305
    else { throw .foreign }
    let ops = value(file[12..<16])
    let parameters = KDFParameters(salt: Array(file[24..<40]), opsLimit: UInt32(ops), memLimit: value(file[16..<24]))
    guard parameters.isAcceptable else { throw .limits(opsLimit: ops, memLimit: parameters.memLimit) }
    return Header(parameters: parameters, nonce: Array(file[41..<65]))
  }

  /// The file for `plaintext` sealed under `key`, with a fresh nonce.
  static func seal(_ plaintext: [UInt8], key: StoreKey) -> [UInt8] {
    let header = Header(parameters: key.parameters, nonce: Sodium.random(Sodium.nonceBytes)).bytes
    return header + Sodium.seal(plaintext, additionalData: header, nonce: Array(header[41..<65]), key: key)
  }

  /// The plaintext of `file`. A key derived with other parameters than the header's cannot open it.
  static func open(_ file: [UInt8], key: StoreKey) throws(Problem) -> [UInt8] {
    let header = try header(of: file)
    guard header.parameters == key.parameters,
      let plaintext = Sodium.open(
        Array(file[headerBytes...]), additionalData: Array(file[..<headerBytes]), nonce: header.nonce, key: key)
    else { throw .unauthenticated }
    return plaintext
  }

  private static func littleEndian(_ v: UInt64, count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }
  }

  private static func value(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
  }
}
