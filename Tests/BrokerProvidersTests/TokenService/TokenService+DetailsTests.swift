import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// What the store says of an account: `details` (every item, for `status`) and the sign-in's own
/// facts, read from the refresh-token record alone.
@Suite struct TokenServiceDetailsTests {
  /// `mail setup` needs only the address: one read of the refresh-token record, no access token
  /// read (each is a keyring round trip, and KeePassXC may confirm each).
  @Test func signedInIdentityReadsTheRefreshTokenRecordOnly() async throws {
    let h = Harness([])
    try await h.store.putRefreshToken("RT1", identity: "ada@example.test")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3000, scopes: ScopeSet([Fixtures.graph]))
    #expect(try await h.service.signedInIdentity(account: "work") == "ada@example.test")
    #expect(await h.store.log == ["load \(ItemKey.refreshToken("work"))"])
  }

  @Test func signedInIdentityIsNilWhenNotSignedInAndThrowsForAnUnknownAccount() async throws {
    let h = Harness([])
    #expect(try await h.service.signedInIdentity(account: "work") == nil)
    await #expect(throws: ConfigError.unknownAccount("nope")) { try await h.service.signedInIdentity(account: "nope") }
  }

  @Test func aLockedStoreIsNotSignedOut() async throws {
    let h = Harness([])
    try await h.store.putRefreshToken("RT1")
    await h.store.inner.setLocked(true)
    await #expect(throws: StoreError.locked) { try await h.service.signedInIdentity(account: "work") }
  }
}
