import BrokerCore
import Foundation
import Synchronization
import Testing

@testable import BrokerStore

@Suite("EncryptedFileStore")
struct EncryptedFileStoreTests {
  let dir = TempDir()
  var storeDir: String { dir.path + "/share/tokenbroker" }
  var file: String { storeDir + "/tokens.enc" }

  func bytes() -> [UInt8]? { FileManager.default.contents(atPath: file).map { Array($0) } }
  func write(_ b: [UInt8]) { _ = FileManager.default.createFile(atPath: file, contents: Data(b), attributes: [.posixPermissions: 0o600]) }

  @Test func createsPrivateFilesWithoutAnyTokenInTheirBytes() async throws {
    let key = testKey()
    let store = EncryptedFileStore(path: file, key: { key })
    #expect(try await store.parameters() == nil)
    try await store.open(with: key, create: true)
    #expect(mode(of: storeDir) == 0o700)
    #expect(mode(of: file) == 0o600)
    #expect(try await store.parameters() == testParameters)
    let record = RefreshTokenRecord(refreshToken: Secret("RT-secret-0123456789"), identity: "u@x", tenant: nil, obtainedAt: 1)
    try await store.save(.refreshToken("work"), label: "l", secret: record.encoded())
    let access = AccessTokenRecord(accessToken: Secret("AT-secret-9876543210"), expiresOn: 2, scopes: ["s"])
    try await store.save(.accessToken("work", ScopeSet(["s"])), label: "l", secret: access.encoded())
    let raw = try #require(bytes())
    for needle in ["RT-secret-0123456789", "AT-secret-9876543210", "refresh-token", "work", key.hexString] {
      #expect(raw.firstRange(of: Array(needle.utf8)) == nil, "\(needle) is in the file")
    }
    #expect(try await store.keys(account: nil).count == 2)
  }

  @Test func lockedStoreThrowsLockedAndTouchesNothing() async throws {
    let key = testKey()
    try await EncryptedFileStore(path: file, key: { key }).open(with: key, create: true)
    let before = bytes()
    let locked = EncryptedFileStore(path: file, key: { nil })
    await #expect(throws: StoreError.encryptedLocked(path: file)) { try await locked.load(.refreshToken("a")) }
    await #expect(throws: StoreError.encryptedLocked(path: file)) { try await locked.save(.refreshToken("a"), label: "l", secret: Secret("x")) }
    await #expect(throws: StoreError.encryptedLocked(path: file)) { try await locked.keys(account: nil) }
    await #expect(throws: StoreError.encryptedLocked(path: file)) { try await locked.preflightWrite() }
    #expect(bytes() == before)
  }

  @Test func wrongPassphraseChangesNothing() async throws {
    let key = testKey("right")
    let store = EncryptedFileStore(path: file, key: { key })
    try await store.open(with: key, create: true)
    try await store.save(.refreshToken("a"), label: "l", secret: Secret("doc"))
    let before = bytes()
    await #expect(throws: StoreError.wrongPassphrase(path: file)) { try await store.open(with: testKey("wrong"), create: false) }
    #expect(bytes() == before)
    try await store.open(with: testKey("right"), create: false)
  }

  @Test func createNeverReplacesAnExistingFile() async throws {
    let key = testKey()
    let store = EncryptedFileStore(path: file, key: { key })
    try await store.open(with: key, create: true)
    try await store.save(.refreshToken("a"), label: "l", secret: Secret("doc"))
    let before = bytes()
    await #expect(throws: StoreError.createdMeanwhile(path: file)) { try await store.open(with: testKey("other"), create: true) }
    #expect(bytes() == before)
  }

  /// bug-cases-3.md X17: with no file, a locked store is missing (and says how to create it), and
  /// an unlock that expected a file finds it gone.
  @Test func noFileIsMissingNotLocked() async throws {
    let locked = EncryptedFileStore(path: file, key: { nil })
    await #expect(throws: StoreError.encryptedMissing(path: file)) { try await locked.load(.refreshToken("a")) }
    await #expect(throws: StoreError.encryptedMissing(path: file)) { try await locked.preflightWrite() }
    await #expect(throws: StoreError.encryptedMissing(path: file)) { try await locked.open(with: testKey(), create: false) }
    #expect(bytes() == nil)
    #expect(StoreError.encryptedMissing(path: file).description.contains("--create"))
  }

  /// bug-cases-3.md X15 step 3: a header asking absurd limits is refused naming the file and what
  /// it asked, before any key is derived, and is left as it is.
  @Test func absurdHeaderLimitsAreNamed() async throws {
    let key = testKey()
    try await EncryptedFileStore(path: file, key: { key }).open(with: key, create: true)
    var b = try #require(bytes())
    b.replaceSubrange(16..<24, with: [0, 0, 0, 0, 16, 0, 0, 0])  // 64 GiB
    write(b)
    let error = await #expect(throws: StoreError.self) { try await EncryptedFileStore(path: file, key: { nil }).parameters() }
    guard case .encryptedFileDamaged(let path, let detail) = error else { Issue.record("\(String(describing: error))"); return }
    #expect(path == file)
    #expect(detail.contains("65536 MiB"))
    #expect(detail.contains("at most 1024 MiB"))
    #expect(bytes() == b)
  }

  /// A flipped byte or a truncated file is named in the error and never written over, not even by
  /// a save that would have replaced everything.
  @Test(arguments: ["flip-header", "flip-body", "truncate", "empty", "foreign"])
  func damagedFileIsNamedAndNeverOverwritten(_ damage: String) async throws {
    let key = testKey()
    let store = EncryptedFileStore(path: file, key: { key })
    try await store.open(with: key, create: true)
    try await store.save(.refreshToken("a"), label: "l", secret: Secret("doc"))
    var b = try #require(bytes())
    switch damage {
    case "flip-header": b[30] ^= 0x40
    case "flip-body": b[b.count - 20] ^= 0x01
    case "truncate": b = Array(b.prefix(70))
    case "empty": b = []
    default: b = Array("{\"items\":{},\"v\":1}\n".utf8) + [UInt8](repeating: 32, count: 100)
    }
    write(b)
    let calls: [@Sendable () async throws -> Void] = [
      { _ = try await store.load(.refreshToken("a")) },
      { try await store.save(.refreshToken("b"), label: "l", secret: Secret("new")) },
      { try await store.delete(.refreshToken("a")) },
      { _ = try await store.keys(account: nil) },
      { try await store.open(with: key, create: false) },
    ]
    for call in calls {
      let error = await #expect(throws: StoreError.self) { try await call() }
      guard case .encryptedFileDamaged(let path, _) = error else {
        if damage.hasPrefix("flip"), case .wrongPassphrase(let path) = error {
          #expect(path == file)  // unlock cannot tell a changed body from a wrong passphrase
          continue
        }
        Issue.record("\(damage): \(String(describing: error))")
        continue
      }
      #expect(path == file)
      #expect(error?.description.contains(file) == true)
    }
    #expect(bytes() == b)
  }

  /// Two processes (here: two stores with their own queues) writing at once lose no item.
  @Test func concurrentWritersOfOneFileLoseNothing() async throws {
    let key = testKey()
    let first = EncryptedFileStore(path: file, key: { key })
    try await first.open(with: key, create: true)
    let second = EncryptedFileStore(path: file, key: { key })
    try await withThrowingTaskGroup(of: Void.self) { group in
      for i in 0..<12 {
        let store = i % 2 == 0 ? first : second
        group.addTask { try await store.save(.refreshToken("acct\(i)"), label: "l", secret: Secret("v\(i)")) }
      }
      try await group.waitForAll()
    }
    let keys = try await first.keys(account: nil)
    #expect(keys.count == 12)
    for i in 0..<12 { #expect(try await second.load(.refreshToken("acct\(i)")) == Secret("v\(i)")) }
  }

  @Test func keyDroppedMeanwhileMeansLocked() async throws {
    let holder = Mutex<StoreKey?>(testKey())
    let store = EncryptedFileStore(path: file, key: { holder.withLock { $0 } })
    try await store.open(with: try #require(holder.withLock { $0 }), create: true)
    try await store.save(.refreshToken("a"), label: "l", secret: Secret("doc"))
    holder.withLock { $0 = nil }
    await #expect(throws: StoreError.encryptedLocked(path: file)) { try await store.load(.refreshToken("a")) }
  }
}

extension StoreKey {
  var hexString: String { String(decoding: hexDigits(), as: UTF8.self) }
}
