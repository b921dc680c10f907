import BrokerCore
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

  @Test func saveOverDuplicatesLeavesOneItem() async throws {
    let key = ItemKey.refreshToken(uniqueAccount("dup"))
    for i in 0..<3 { try await store.insertDuplicate(key, label: "d", secret: Secret("RT_\(i)")) }
    try await store.save(key, label: key.label(provider: "azure"), secret: Secret("RT_final"))
    #expect(try await store.itemCount(key) == 1)
    #expect(try await store.load(key) == Secret("RT_final"))
    try await store.deleteAll(account: key.account)
    #expect(try await store.itemCount(key) == 0)
  }

  @Test func versionNamesLibsecret() {
    #expect(LibsecretStore.libraryVersion.hasPrefix("libsecret 0."))
  }
}
