import BrokerCore
import Foundation
import Testing

@testable import BrokerStore

@Suite("FileStore")
struct FileStoreTests {
  let dir = TempDir()
  var tokenDir: String { dir.path + "/share/tokenbroker" }
  var tokenFile: String { tokenDir + "/tokens.json" }

  @Test func createsDirectory0700AndFile0600() async throws {
    let store = FileStore(path: tokenFile, warn: { _ in })
    try await store.save(.refreshToken("work"), label: "l", secret: Secret("doc"))
    #expect(mode(of: tokenDir) == 0o700)
    #expect(mode(of: tokenFile) == 0o600)
    let text = try String(contentsOfFile: tokenFile, encoding: .utf8)
    #expect(text == "{\"items\":{\"refresh-token:work\":\"doc\"},\"v\":1}\n")
  }

  @Test func refusesGroupReadableFile() async throws {
    let store = FileStore(path: tokenFile, warn: { _ in })
    try await store.save(.refreshToken("work"), label: "l", secret: Secret("doc"))
    chmod(tokenFile, 0o644)
    let error = await #expect(throws: StoreError.self) { try await store.load(.refreshToken("work")) }
    guard case .file(let path, let detail) = error else { Issue.record("wrong error \(String(describing: error))"); return }
    #expect(path == tokenFile)
    #expect(detail.contains("chmod 600 \(tokenFile)"))
    await #expect(throws: StoreError.self) {
      try await store.save(.refreshToken("work"), label: "l", secret: Secret("other"))
    }
    chmod(tokenFile, 0o600)
    #expect(try await store.load(.refreshToken("work")) == Secret("doc"))
  }

  @Test(.enabled(if: geteuid() == 0, "needs root to give the file away"))
  func refusesAFileOfAnotherUser() async throws {
    let store = FileStore(path: tokenFile, warn: { _ in })
    try await store.save(.refreshToken("work"), label: "l", secret: Secret("doc"))
    chown(tokenFile, 65534, 65534)
    let error = await #expect(throws: StoreError.self) { try await store.load(.refreshToken("work")) }
    #expect(error.map { "\($0)" }?.contains("owned by uid 65534") == true)
  }

  @Test func refusesOpenDirectory() async throws {
    mkdir(dir.path + "/share", 0o700)
    mkdir(tokenDir, 0o755)
    let store = FileStore(path: tokenFile, warn: { _ in })
    let error = await #expect(throws: StoreError.self) {
      try await store.save(.refreshToken("work"), label: "l", secret: Secret("doc"))
    }
    #expect(error.map { "\($0)" }?.contains("chmod 700 \(tokenDir)") == true)
    #expect(mode(of: tokenFile) == nil)
  }

  @Test func refusesSymlinkAndForeignJSON() async throws {
    let store = FileStore(path: tokenFile, warn: { _ in })
    try await store.save(.refreshToken("work"), label: "l", secret: Secret("doc"))
    let other = try dir.write("other.json", "[1,2]")
    unlink(tokenFile)
    symlink(other, tokenFile)
    await #expect(throws: StoreError.self) { try await store.load(.refreshToken("work")) }
    unlink(tokenFile)
    _ = try dir.write("share/tokenbroker/tokens.json", "not json")
    let error = await #expect(throws: StoreError.self) { try await store.keys(account: nil) }
    #expect(error.map { "\($0)" }?.contains("not a tokenbroker token file") == true)
  }

  @Test func warnsOnEveryWrite() async throws {
    let log = WarningLog()
    let store = FileStore(path: tokenFile, warn: { log.append($0) })
    try await store.save(.refreshToken("work"), label: "l", secret: Secret("doc"))
    try await store.save(.refreshToken("work"), label: "l", secret: Secret("doc2"))
    _ = try await store.load(.refreshToken("work"))
    try await store.delete(.refreshToken("work"))
    try await store.delete(.refreshToken("absent"))  // nothing written, no warning
    #expect(log.lines.count == 3)
    #expect(
      log.lines.first
        == "storing tokens in plaintext at \(tokenFile) (store = file); use the Secret Service to keep them encrypted"
    )
    #expect(!log.lines.joined().contains("doc"))
  }

  /// Two stores on one file stand for two processes: each has its own queue and lock file
  /// descriptor, so only the `flock` keeps their read-modify-write cycles apart.
  @Test func concurrentWritersLoseNothing() async throws {
    let first = FileStore(path: tokenFile, warn: { _ in })
    let second = FileStore(path: tokenFile, warn: { _ in })
    let keys = (0..<40).map { ItemKey.accessToken("acct", ScopeSet(["scope\($0)"])) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (i, key) in keys.enumerated() {
        let store = i.isMultiple(of: 2) ? first : second
        group.addTask { try await store.save(key, label: "l", secret: Secret("v\(i)")) }
      }
      try await group.waitForAll()
    }
    #expect(Set(try await first.keys(account: "acct")) == Set(keys))
    for (i, key) in keys.enumerated() { #expect(try await second.load(key) == Secret("v\(i)")) }
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: tokenDir).filter { $0.hasPrefix(".tokens") }
    #expect(leftovers.isEmpty)
  }

  @Test(arguments: ["plain", "with:colon", "100%", "%3A", "sp ace/slash"])
  func itemNamesRoundTrip(_ account: String) {
    for key in [ItemKey.refreshToken(account), .accessToken(account, ScopeSet(["https://x/.default", "b:c"])),
      ItemKey(account: account, kind: .cookies)]
    {
      #expect(FileStore.key(named: FileStore.name(of: key)) == key)
    }
    #expect(FileStore.name(of: .accessToken("a", ScopeSet(["y", "x"]))) == "access-token:a:x y")
    #expect(FileStore.key(named: "access-token:a") == nil)
    #expect(FileStore.key(named: "bogus:a") == nil)
  }
}
