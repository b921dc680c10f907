import BrokerCore
import Testing

@testable import BrokerStore

@Suite("EncryptedFileFormat and Sodium")
struct EncryptedFileFormatTests {
  @Test func headerIsTheDocumentedLayout() throws {
    let key = testKey()
    let file = EncryptedFileFormat.seal(Array("{}".utf8), key: key)
    #expect(Array(file[0..<8]) == Array("TBKSTOR".utf8) + [0])
    #expect(Array(file[8..<12]) == [1, 2, 0, 0])
    #expect(Array(file[12..<16]) == [1, 0, 0, 0])  // opslimit 1, little-endian
    #expect(Array(file[16..<24]) == [0, 0, 0x80, 0, 0, 0, 0, 0])  // 8 MiB
    #expect(Array(file[24..<40]) == testParameters.salt)
    #expect(file[40] == 1)
    #expect(file.count == 65 + 2 + 16)
    let header = try EncryptedFileFormat.header(of: file)
    #expect(header.parameters == testParameters)
    #expect(try EncryptedFileFormat.open(file, key: key) == Array("{}".utf8))
  }

  @Test func everyWriteHasAFreshNonce() {
    let key = testKey()
    let a = EncryptedFileFormat.seal(Array("same".utf8), key: key)
    let b = EncryptedFileFormat.seal(Array("same".utf8), key: key)
    #expect(a[41..<65] != b[41..<65])
    #expect(a[65...] != b[65...])
  }

  /// The header is the additional data: no byte of the file can change unnoticed.
  @Test func everyChangedByteFailsAuthentication() throws {
    let key = testKey()
    let file = EncryptedFileFormat.seal(Array("{\"v\":1}".utf8), key: key)
    for i in file.indices {
      var changed = file
      changed[i] ^= 0x01
      #expect(throws: EncryptedFileFormat.Problem.self) { try EncryptedFileFormat.open(changed, key: key) }
    }
  }

  @Test func truncatedAndForeignFilesAreTold() {
    let key = testKey()
    let file = EncryptedFileFormat.seal(Array("{}".utf8), key: key)
    for length in [0, 5, 8, 64, 65, 80] {
      #expect(throws: EncryptedFileFormat.Problem.truncated) { try EncryptedFileFormat.open(Array(file.prefix(length)), key: key) }
    }
    #expect(throws: EncryptedFileFormat.Problem.unauthenticated) {
      try EncryptedFileFormat.open(Array(file.dropLast()), key: key)
    }
    let json = Array("{\"items\":{},\"v\":1}\n".utf8) + [UInt8](repeating: 32, count: 80)
    #expect(throws: EncryptedFileFormat.Problem.foreign) { try EncryptedFileFormat.header(of: json) }
    var newer = file
    newer[8] = 2
    #expect(throws: EncryptedFileFormat.Problem.foreign) { try EncryptedFileFormat.header(of: newer) }
  }

  /// A hostile header cannot make the reader allocate gigabytes or spin for minutes; the
  /// refusal says what it asked (bug-cases-3.md X15 step 3).
  @Test func limitsOutsideTheCapsAreRefusedBeforeAnyDerivation() {
    let file = EncryptedFileFormat.seal(Array("{}".utf8), key: testKey())
    var huge = file
    huge[23] = 0x01  // memlimit ≥ 2^56
    #expect(throws: EncryptedFileFormat.Problem.limits(opsLimit: 1, memLimit: 1 << 56 | 8 << 20)) {
      try EncryptedFileFormat.header(of: huge)
    }
    var slow = file
    slow[12] = 200
    #expect(throws: EncryptedFileFormat.Problem.limits(opsLimit: 200, memLimit: 8 << 20)) { try EncryptedFileFormat.header(of: slow) }
    var endless = file
    endless[15] = 0x80  // opslimit 2^31 + 1
    #expect(throws: EncryptedFileFormat.Problem.limits(opsLimit: 1 << 31 | 1, memLimit: 8 << 20)) {
      try EncryptedFileFormat.header(of: endless)
    }
  }

  @Test func derivationDependsOnPassphraseAndSaltOnly() {
    let one = testKey("pass")
    #expect(testKey("pass").hexDigits() == one.hexDigits())
    #expect(testKey("Pass").hexDigits() != one.hexDigits())
    #expect(testKey("pass", parameters: .fresh(opsLimit: 1, memLimit: 8 << 20)).hexDigits() != one.hexDigits())
    #expect(one.hexDigits().count == 64)
  }

  @Test func keyRoundTripsThroughHexAndPassphraseIsZeroed() throws {
    var passphrase = Array("hunter2".utf8)
    let key = try Sodium.deriveKey(passphrase: &passphrase, parameters: testParameters)
    #expect(passphrase.allSatisfy { $0 == 0 })
    #expect(key.isLocked)
    let copy = try #require(StoreKey(hex: key.hexDigits(), parameters: testParameters))
    #expect(copy.hexDigits() == key.hexDigits())
    #expect(StoreKey(hex: Array("zz".utf8) + key.hexDigits().dropFirst(2), parameters: testParameters) == nil)
    #expect(StoreKey(hex: Array(key.hexDigits().dropLast()), parameters: testParameters) == nil)
    let file = EncryptedFileFormat.seal(Array("x".utf8), key: key)
    #expect(try EncryptedFileFormat.open(file, key: copy) == Array("x".utf8))
  }

  @Test func aKeyOfOtherParametersDoesNotOpen() {
    let file = EncryptedFileFormat.seal(Array("x".utf8), key: testKey())
    let other = testKey(parameters: .fresh(opsLimit: 1, memLimit: 8 << 20))
    #expect(throws: EncryptedFileFormat.Problem.unauthenticated) { try EncryptedFileFormat.open(file, key: other) }
  }
}
