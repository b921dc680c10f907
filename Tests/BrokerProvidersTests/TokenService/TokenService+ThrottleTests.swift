import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// bug-cases-3.md X07: a throttling provider holds back every refresh of the account until its
/// wait ends; it never signs anyone out (interface.md §6).
@Suite struct TokenServiceThrottleTests {
  static let loop = Fixtures.oauthError(
    "invalid_grant",
    description: "AADSTS50196: The server terminated an operation because it encountered a client request loop.",
    codes: [50196])

  @Test func X07_requestLoopDetectionHoldsBackRefreshesAndDeletesNothing() async throws {
    let h = Harness([Self.loop, Fixtures.tokenReply(at: "AT2", rt: "RT2")])
    try await h.store.putRefreshToken("RT1")
    await #expect(throws: ProviderError.self) { try await h.get(force: true) }
    guard case .throttled(_, _, let seconds, let reason) = await #expect(throws: ProviderError.self, performing: { try await h.get() })
    else { Issue.record("not throttled"); return }
    #expect(seconds == ThrottleWait.requestLoopSeconds)
    #expect(reason.contains("AADSTS50196"))
    #expect(await h.store.writes.isEmpty)  // nothing deleted, nothing stored
    #expect(try await h.store.refreshRecord()?.refreshToken == Secret("RT1"))
    // Ten calls within the hold send nothing, --force-refresh included.
    for i in 0..<10 {
      h.time.advance(by: 5)
      _ = i
      await #expect(throws: ProviderError.self) { try await h.get(force: true) }
    }
    #expect(h.transport.requests.count == 1)
    h.time.advance(by: 11)  // 61 s after the throttle
    #expect(try await h.get().accessToken == Secret("AT2"))
    #expect(h.refreshTokensSent == ["RT1", "RT1"])
  }

  @Test func X07_a429HoldsForItsRetryAfterAndIsNotRetriedAtOnce() async throws {
    let h = Harness([
      .json(#"{"error":"rate_limited"}"#, status: 429, headers: [HTTPHeader("Retry-After", "30")]),
      Fixtures.tokenReply(),
    ])
    try await h.store.putRefreshToken("RT1")
    let error = await #expect(throws: ProviderError.self) { try await h.get() }
    guard case .throttled(let account, _, 30, _) = error else { Issue.record("got \(String(describing: error))"); return }
    #expect(account == "work")
    #expect(h.time.sleeps.isEmpty)
    h.time.advance(by: 29)
    guard case .throttled(_, _, 1, _) = await #expect(throws: ProviderError.self, performing: { try await h.get() })
    else { Issue.record("the hold should say 1 s left"); return }
    #expect(h.transport.requests.count == 1)
    h.time.advance(by: 1)
    #expect(try await h.get().accessToken == Secret("AT2"))
  }

  @Test func X07_aCachedTokenIsStillServedDuringAHold() async throws {
    let h = Harness([Self.loop])
    try await h.store.putRefreshToken("RT1")
    try await h.store.putAccessToken("AT1", expiresOn: Fixtures.start + 3000, scopes: h.scopes)
    await #expect(throws: ProviderError.self) { try await h.get(force: true) }
    #expect(try await h.get().accessToken == Secret("AT1"))
  }

  @Test func X07_aNewSignInOrALogoutEndsTheHold() async throws {
    let lock = NoRefreshLock()
    let h = Harness(FakeTransport([Self.loop]), refreshLock: lock)
    try await h.store.putRefreshToken("RT1")
    await #expect(throws: ProviderError.self) { try await h.get() }
    #expect(lock.hold(account: "work", now: h.time.now) != nil)
    _ = try await h.service.logout(account: "work")
    #expect(lock.hold(account: "work", now: h.time.now) == nil)
  }

  @Test func X07_theMessageSaysWhenToTryAgainAndKeepsTheSignIn() {
    let e = ProviderError.throttled(account: "work", host: "login.microsoftonline.com", seconds: 60, reason: "HTTP 429")
    #expect(
      e.description
        == "the identity provider 'login.microsoftonline.com' is throttling requests for 'work' (HTTP 429); "
        + "the sign-in is kept and nothing is sent for it for 60 s; try again in 60 s")
  }
}
