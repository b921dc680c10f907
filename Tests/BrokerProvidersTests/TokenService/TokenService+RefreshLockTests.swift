import BrokerCore
import BrokerTestSupport
import Synchronization
import Testing

@testable import BrokerProviders

/// Refreshes of one account take turns under the refresh lock, and what another process stored
/// while this one waited is used instead of redeeming a stale refresh token.
@Suite struct TokenServiceRefreshLockTests {
  /// A lock that runs `whileWaiting` (another process's work) before the body, and counts holds.
  final class ScriptedLock: RefreshLock, Sendable {
    let whileWaiting: @Sendable () async throws -> Void
    let held = Mutex(false)
    let holds = Mutex(0)
    init(whileWaiting: @escaping @Sendable () async throws -> Void = {}) { self.whileWaiting = whileWaiting }

    func withLock<T: Sendable>(account: String, _ body: () async throws -> T) async throws -> T {
      try await whileWaiting()
      held.withLock { $0 = true }
      holds.withLock { $0 += 1 }
      defer { held.withLock { $0 = false } }
      return try await body()
    }
    let memory = NoRefreshLock()
    func hold(account: String, now: Int64) -> RefreshHold? { memory.hold(account: account, now: now) }
    func setHold(_ hold: RefreshHold?, account: String) { memory.setHold(hold, account: account) }
  }

  @Test func theRefreshRunsUnderTheLock() async throws {
    let lock = ScriptedLock()
    let transport = FakeTransport { _, _ in
      #expect(lock.held.withLock { $0 })
      return HTTPResponse.json(#"{"token_type":"Bearer","access_token":"AT2","expires_in":3599,"refresh_token":"RT2"}"#)
    }
    let h = Harness(transport, refreshLock: lock)
    try await h.store.putRefreshToken("RT1")
    #expect(try await h.get().accessToken == Secret("AT2"))
    #expect(lock.holds.withLock { $0 } == 1)
  }

  @Test func aCachedTokenTakesNoLock() async throws {
    let lock = ScriptedLock()
    let h = Harness(FakeTransport([]), refreshLock: lock)
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3600, scopes: h.scopes)
    #expect(try await h.get().accessToken == Secret("AT1"))
    #expect(lock.holds.withLock { $0 } == 0)
  }

  @Test(arguments: [false, true])
  func aTokenAnotherProcessStoredWhileWaitingIsUsed(force: Bool) async throws {
    let store = RecordingStore()
    let scopes = ScopeSet([Fixtures.graph])
    let lock = ScriptedLock {
      try await store.putRefreshToken("RT2")
      try await store.putAccessToken("AT-OTHER", expiresOn: Fixtures.start + 3600, scopes: scopes)
    }
    let h = Harness(FakeTransport([]), store: store, refreshLock: lock)
    try await store.putRefreshToken("RT1")
    try await store.putAccessToken("AT-OLD", expiresOn: Fixtures.start + 10, scopes: scopes)
    #expect(try await h.get(force: force).accessToken == Secret("AT-OTHER"))
    #expect(h.refreshTokensSent == [])
  }

  @Test func aForcedRefreshDoesNotTakeTheTokenItHadBefore() async throws {
    let lock = ScriptedLock()
    let h = Harness(FakeTransport([Fixtures.tokenReply(at: "AT2", rt: "RT2")]), refreshLock: lock)
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3600, scopes: h.scopes)
    #expect(try await h.get(force: true).accessToken == Secret("AT2"))
    #expect(h.refreshTokensSent == ["RT1"])
  }

  @Test func aRefreshTokenRotatedWhileWaitingIsTheOneRedeemed() async throws {
    let store = RecordingStore()
    let lock = ScriptedLock { try await store.putRefreshToken("RT2") }
    let h = Harness(FakeTransport([Fixtures.tokenReply(at: "AT3", rt: "RT3")]), store: store, refreshLock: lock)
    try await store.putRefreshToken("RT1")
    #expect(try await h.get().accessToken == Secret("AT3"))
    #expect(h.refreshTokensSent == ["RT2"])
    #expect(try await store.refreshRecord()?.refreshToken == Secret("RT3"))
  }
}
