import BrokerCore
import Foundation
import Synchronization
import Testing

@testable import BrokerStore

/// Secret Service specifics, on the process's session bus. Run inside the recipe of
/// keyring-notes.md with `TOKENBROKER_KEYRING_TESTS=1`; then a missing or locked keyring fails.
@Suite("LibsecretStore", .enabled(if: keyringTestsEnabled, "set TOKENBROKER_KEYRING_TESTS=1 inside dbus-run-session"))
struct LibsecretStoreTests {
  let store = LibsecretStore()

  @Test func anUnlockedKeyringIsReachable() async throws {
    let key = ItemKey.refreshToken(uniqueAccount("probe"))
    try await store.save(key, label: key.label(provider: "azure"), secret: Secret("probe"))
    #expect(try await store.load(key) == Secret("probe"))
    try await store.delete(key)
    try await store.unlock(timeout: 5)  // already unlocked: returns at once, no prompt
    try await store.preflightWrite()  // default collection present and unlocked: no prompt, no item
  }

  /// A connection made ahead (the agent's, at its start) serves the operations queued after it,
  /// `forgetConnection` included while it is new (each agent request that builds a store calls
  /// it); once it is older, forgetting it makes the next operation connect anew.
  @Test func aConnectionMadeAheadServesTheNextOperationsWhileItIsNew() async throws {
    let madeAhead = Mutex<String?>(nil)
    LibsecretStore.connectAhead(timeout: 5, keptFor: 60_000) { path in madeAhead.withLock { $0 = path } }
    LibsecretStore.forgetConnection()
    let used = try await store.sessionPath()
    #expect(used != nil)
    #expect(used == madeAhead.withLock { $0 })
    let key = ItemKey.refreshToken(uniqueAccount("ahead"))
    #expect(try await store.load(key) == nil)
    try await store.save(key, label: key.label(provider: "azure"), secret: Secret("ahead"))
    #expect(try await store.load(key) == Secret("ahead"))
    try await store.delete(key)

    let old = Mutex<String?>(nil)
    LibsecretStore.connectAhead(timeout: 5, keptFor: 1) { path in old.withLock { $0 = path } }
    _ = try await store.sessionPath()  // queued after it: it has been made
    let madeOld = try #require(old.withLock { $0 })
    try await Task.sleep(for: .milliseconds(20))
    LibsecretStore.forgetConnection()
    let fresh = try await store.sessionPath()
    #expect(fresh != nil)
    #expect(fresh != madeOld)
  }

  /// B06: duplicates left by a crash or another program.
  @Test func loadUsesTheNewestDuplicateAndRemovesTheOthers() async throws {
    let key = ItemKey.refreshToken(uniqueAccount("dup"))
    try await store.insertDuplicate(key, label: "old", secret: Secret("RT_old"))
    try await store.insertDuplicate(key, label: "new", secret: Secret("RT_new"))
    #expect(try await store.itemCount(key) == 2)
    #expect(try await store.keys(account: key.account) == [key])
    #expect(try await store.load(key) == Secret("RT_new"))
    #expect(try await store.itemCount(key) == 1)
    #expect(try await store.load(key) == Secret("RT_new"))
    try await store.delete(key)
  }

  /// Of duplicates, `load` takes the newer document (`DocumentAge`), wherever the keyring put it:
  /// here the newer was written first, so it has the smaller path and the same or an earlier
  /// `Modified` (KeePassXC's UUID paths order nothing at all); the stale one is deleted.
  @Test func loadTakesTheNewerDocumentWhateverItsPathOrModified() async throws {
    for (newer, older) in [
      (#"{"v":1,"refresh_token":"RT_new","obtained_at":2000}"#, #"{"v":1,"refresh_token":"RT_old","obtained_at":1000}"#),
      (
        #"{"v":1,"refresh_token":"RT_new","obtained_at":1000,"rotations":2}"#,
        #"{"v":1,"refresh_token":"RT_old","obtained_at":1000,"rotations":1}"#
      ),
    ] {
      let key = ItemKey.refreshToken(uniqueAccount("age"))
      try await store.insertDuplicate(key, label: "new", secret: Secret(newer))
      try await store.insertDuplicate(key, label: "old", secret: Secret(older))
      #expect(try await store.load(key) == Secret(newer))
      #expect(try await store.itemCount(key) == 1)
      #expect(try await store.load(key) == Secret(newer))
      try await store.delete(key)
    }
  }

  /// `save` writes a new item and then deletes the older ones, never the newer document of
  /// another writer (`load` reads that one).
  @Test func saveDeletesTheOlderItemsOnly() async throws {
    let key = ItemKey.refreshToken(uniqueAccount("save"))
    let stale = #"{"v":1,"refresh_token":"RT_1","obtained_at":1000}"#
    try await store.insertDuplicate(key, label: "stale", secret: Secret(stale))
    let mine = #"{"v":1,"refresh_token":"RT_2","obtained_at":2000}"#
    try await store.save(key, label: key.label(provider: "azure"), secret: Secret(mine))
    #expect(try await store.itemCount(key) == 1)
    #expect(try await store.load(key) == Secret(mine))
    let theirs = #"{"v":1,"refresh_token":"RT_4","obtained_at":4000}"#
    try await store.insertDuplicate(key, label: "another writer", secret: Secret(theirs))
    try await store.save(key, label: key.label(provider: "azure"), secret: Secret(#"{"v":1,"refresh_token":"RT_3","obtained_at":3000}"#))
    #expect(try await store.itemCount(key) == 2)
    #expect(try await store.load(key) == Secret(theirs))
    #expect(try await store.itemCount(key) == 1)
    try await store.delete(key)
  }

  /// A token refreshed within the second of the one it replaces, with a shorter lifetime
  /// (`--force-refresh`), replaces it: it is not "older" for expiring sooner.
  @Test func aSaveReplacesADocumentOfTheSameSecondThatExpiresLater() async throws {
    let key = ItemKey.accessToken(uniqueAccount("forced"), ScopeSet(["s"]))
    let hour = #"{"v":1,"access_token":"AT_1","expires_on":4600,"obtained_at":1000,"scopes":["s"]}"#
    try await store.save(key, label: "l", secret: Secret(hour))
    let forced = #"{"v":1,"access_token":"AT_2","expires_on":1002,"obtained_at":1000,"scopes":["s"]}"#
    try await store.save(key, label: "l", secret: Secret(forced))
    #expect(try await store.itemCount(key) == 1)
    #expect(try await store.load(key) == Secret(forced))
    try await store.delete(key)
  }

  @Test func saveOverDuplicatesLeavesOneItem() async throws {
    let key = ItemKey.refreshToken(uniqueAccount("dup"))
    for i in 0..<3 { try await store.insertDuplicate(key, label: "d", secret: Secret("RT_\(i)")) }
    try await store.save(key, label: key.label(provider: "azure"), secret: Secret("RT_final"))
    #expect(try await store.itemCount(key) == 1)
    #expect(try await store.load(key) == Secret("RT_final"))
    try await store.deleteAll(account: key.account)
    #expect(try await store.itemCount(key) == 0)
  }

  /// Items with tokenbroker's attributes but another schema (`xdg:schema` of an older
  /// writer, or none: secret-tool's `org.freedesktop.Secret.Generic`), made here with secret-tool.
  /// They were invisible to every operation, so `logout` left them. Now `keys` lists them and
  /// `delete` removes them (logout and revoke remove every copy); `load` never takes one for
  /// tokenbroker's item, whether it is alone or newer, and leaves it, and `save` leaves it too (it
  /// may hold a refresh token, which only logout, revoke or invalid_grant delete).
  @Test func itemsOfAnotherSchemaAreListedAndDeletedButNeverRead() async throws {
    let key = ItemKey.refreshToken(uniqueAccount("foreign"))
    try secretTool(store: key, schema: nil, secret: "RT_generic")
    try secretTool(store: key, schema: "org.example.Older", secret: "RT_older")
    #expect(try secretToolCount(key) == 2)
    #expect(try await store.keys(account: key.account) == [key])
    #expect(try await store.load(key) == nil)
    try await store.save(key, label: key.label(provider: "azure"), secret: Secret("RT_ours"))
    try secretTool(store: key, schema: "org.example.Newer", secret: "RT_newer")
    #expect(try await store.load(key) == Secret("RT_ours"))
    #expect(try secretToolCount(key) == 4)
    try await store.delete(key)
    #expect(try secretToolCount(key) == 0)
    #expect(try await store.keys(account: key.account) == [])
  }

  /// `load` reads the usual item (one, unlocked, of tokenbroker's schema) as `secret-tool lookup`
  /// does, by path with no item proxy; duplicates, another schema's items and no item at all
  /// are left to its full search, whose rules the tests above hold.
  @Test func loadReadsTheSoleItemByPathAndLeavesTheRestToTheFullSearch() async throws {
    let key = ItemKey.refreshToken(uniqueAccount("sole"))
    #expect(try await store.soleSecret(key) == nil)  // none
    try secretTool(store: key, schema: "org.example.Older", secret: "RT_older")
    #expect(try await store.soleSecret(key) == nil)  // another schema's only
    try await store.save(key, label: key.label(provider: "azure"), secret: Secret("RT_ours"))
    #expect(try await store.soleSecret(key) == "RT_ours")  // ours beside another schema's
    #expect(try await store.load(key) == Secret("RT_ours"))
    try await store.insertDuplicate(key, label: "dup", secret: Secret("RT_dup"))
    #expect(try await store.soleSecret(key) == nil)  // duplicates: the full search picks and cleans
    #expect(try await store.load(key) == Secret("RT_dup"))
    #expect(try await store.soleSecret(key) == "RT_dup")
    try await store.delete(key)
    #expect(try await store.soleSecret(key) == nil)
  }

  /// A load that finds nothing while another process holds the write lock (its save may be
  /// between a delete and the write it makes again) looks again once the lock is released: here
  /// the item comes from another process (secret-tool) while the lock is held.
  @Test func aLoadThatFindsNothingWhileTheWriteLockIsHeldLooksAgainAfterIt() async throws {
    let lock = TempDir().path + "/keyring.lock"
    let key = ItemKey.refreshToken(uniqueAccount("wait"))
    var held = WriteLock(path: lock, keepWaiting: { false })
    #expect(held != nil)
    let reader = LibsecretStore(writeLock: lock)
    let loading = Task { try await reader.load(key) }
    let tool = Process()
    tool.executableURL = URL(fileURLWithPath: "/usr/bin/secret-tool")
    tool.arguments = ["store", "--label", "written meanwhile"]
      + (key.attributes + [("xdg:schema", "org.tokenbroker.Secret")]).flatMap { [$0.0, $0.1] }
    let input = Pipe()
    tool.standardInput = input
    try tool.run()
    input.fileHandleForWriting.write(Data("RT_meanwhile".utf8))
    try input.fileHandleForWriting.close()
    tool.waitUntilExit()
    #expect(tool.terminationStatus == 0)
    held = nil
    #expect(try await loading.value == Secret("RT_meanwhile"))
    try await store.delete(key)
  }

  @Test func versionNamesLibsecret() {
    #expect(LibsecretStore.libraryVersion.hasPrefix("libsecret 0."))
  }
}

/// Stores an item with `key`'s attributes and `schema` as its `xdg:schema` (nil: none, so
/// gnome-keyring names it `org.freedesktop.Secret.Generic`), as another program would: secret-tool.
private func secretTool(store key: ItemKey, schema: String?, secret: String) throws {
  let attributes = (schema.map { ["xdg:schema", $0] } ?? []) + key.attributes.flatMap { [$0.0, $0.1] }
  let r = try run(["store", "--label", "another writer"] + attributes, input: secret)
  #expect(r.status == 0, "\(r.output)")
}

/// How many items secret-tool finds with `key`'s attributes, of any schema.
private func secretToolCount(_ key: ItemKey) throws -> Int {
  let r = try run(["search", "--all"] + key.attributes.flatMap { [$0.0, $0.1] }, input: "")
  return r.output.split(separator: "\n").filter { $0.hasPrefix("[/") }.count
}

private func run(_ arguments: [String], input: String) throws -> (status: Int32, output: String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/secret-tool")
  process.arguments = arguments
  let stdin = Pipe()
  let stdout = Pipe()
  process.standardInput = stdin
  process.standardOutput = stdout
  process.standardError = stdout
  try process.run()
  stdin.fileHandleForWriting.write(Data(input.utf8))
  try stdin.fileHandleForWriting.close()
  let data = stdout.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
