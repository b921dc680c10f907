import BrokerCore
import BrokerTestSupport
import Synchronization
import Testing

@testable import BrokerProviders

/// interface.md §8.1: what an account needs of its user is recorded when its grant dies, and every
/// later caller is answered from it at once, with nothing sent to the provider.
@Suite struct TokenServiceAccountStateTests {
  let at = LocalTime.hoursMinutes(Fixtures.start)

  @Test func aRejectedGrantIsRecordedAndEveryLaterCallerIsToldSoWithoutARequest() async throws {
    let h = Harness([Fixtures.oauthError("invalid_grant", description: "AADSTS70008: expired", codes: [70008])])
    try await h.store.putRefreshToken("RT1")
    await #expect(throws: ProviderError.self) { try await h.get() }
    let need = SignInNeed(
      since: Fixtures.start, reason: .rejected,
      detail: "the refresh token was rejected (invalid_grant, AADSTS70008: it expired after a long time unused)",
      identity: "user1@example.test")
    #expect(h.states.recorded(account: "work") == .signInNeeded(need))
    #expect(try await h.service.accountState(account: "work") == .signInNeeded(need))
    for _ in 0..<3 {
      let error = await #expect(throws: ProviderError.self) { try await h.get() }
      #expect(
        error?.description
          == "sign-in needed for 'work': the refresh token was rejected (invalid_grant, AADSTS70008: it expired after a long time unused) at \(at); "
          + "run 'tokenbroker login work'")
    }
    #expect(h.transport.requests.count == 1)
  }

  /// The state is written before the refresh token is deleted: a caller in between still finds the
  /// token (signed in), never an account without a token and without its reason.
  @Test func theStateIsRecordedBeforeTheRefreshTokenGoes() async throws {
    let h = Harness([Fixtures.oauthError("invalid_grant")])
    try await h.store.putRefreshToken("RT1")
    let states = h.states
    let seen = SeenAtDelete()
    await h.store.whenDeleting { seen.state.withLock { $0 = states.recorded(account: "work") } }
    await #expect(throws: ProviderError.self) { try await h.get() }
    #expect(seen.state.withLock { $0?.name } == "sign-in-needed")
  }

  @Test func aNeverSignedInAccountIsNotSignedIn() async throws {
    let h = Harness([])
    await #expect(throws: ProviderError.signInRequired(account: "work", reason: "not signed in")) { try await h.get() }
    #expect(try await h.service.accountState(account: "work") == .signInNeeded(SignInNeed(since: nil, reason: .neverSignedIn)))
  }

  @Test func aLogoutIsSignedOutAndNamedAsNotSignedIn() async throws {
    let h = Harness([])
    try await h.store.putRefreshToken("RT1")
    _ = try await h.service.logout(account: "work")
    #expect(try await h.service.accountState(account: "work") == .signedOut(since: Fixtures.start))
    await #expect(throws: ProviderError.signInRequired(account: "work", reason: "not signed in")) { try await h.get() }
  }

  /// A recorded state never outweighs a stored refresh token: it cannot sign anyone out.
  @Test func aStoredRefreshTokenIsSignedInWhateverWasRecorded() async throws {
    let h = Harness([Fixtures.tokenReply()])
    h.states.record(.signInNeeded(SignInNeed(since: 1, reason: .rejected)), account: "work")
    try await h.store.putRefreshToken("RT1")
    #expect(try await h.service.accountState(account: "work") == .signedIn)
    #expect(try await h.get().accessToken == Secret("AT2"))
  }

  @Test func aSignInRecordsSignedIn() async throws {
    let h = Harness([Fixtures.deviceReply(), Fixtures.tokenReply(idToken: Fixtures.idToken)])
    h.states.record(.signInNeeded(SignInNeed(since: 1, reason: .rejected)), account: "work")
    _ = try await h.service.loginWithDeviceCode(account: "work") { _ in }
    #expect(h.states.recorded(account: "work") == .signedIn)
  }

  /// What the user has been told is part of the one line: a notification, or a dismissal and
  /// the end of its quiet time; a cooldown that has ended is the need again.
  @Test func theLineSaysWhatTheUserWasTold() async throws {
    let h = Harness([])
    let need = SignInNeed(since: Fixtures.start - 60, reason: .rejected)
    let since = LocalTime.hoursMinutes(Fixtures.start - 60)
    h.states.record(.signInPending(need), account: "work")
    let pending = await #expect(throws: ProviderError.self) { try await h.get() }
    #expect(
      pending?.description
        == "sign-in needed for 'work': the refresh token was rejected at \(since); a notification was sent; "
        + "run 'tokenbroker login work'")
    h.states.record(.cooldown(need, until: Fixtures.start + 900), account: "work")
    let quiet = await #expect(throws: ProviderError.self) { try await h.get() }
    #expect(quiet?.description.contains("; dismissed; quiet until \(LocalTime.hoursMinutes(Fixtures.start + 900)); run ") == true)
    h.states.record(.cooldown(need, until: Fixtures.start), account: "work")
    #expect(try await h.service.accountState(account: "work") == .signInNeeded(need))
  }
}

/// What a test's store hook saw.
private final class SeenAtDelete: Sendable {
  let state = Mutex<AccountState?>(nil)
}
