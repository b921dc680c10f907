import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// A refresh still in flight when a logout or another sign-in finishes must not write the old
/// sign-in back nor hand out its access token (bug-cases.md B20).
@Suite struct TokenServiceRefreshRaceTests {
  @Test func aLogoutDuringTheRefreshWins() async throws {
    let store = RecordingStore()
    let transport = FakeTransport { _, _ in
      try await store.delete(.refreshToken("work"))
      return HTTPResponse.json(#"{"token_type":"Bearer","access_token":"AT-OLD","expires_in":3599,"refresh_token":"RT2"}"#)
    }
    let h = Harness(transport, store: store)
    try await store.putRefreshToken("RT1")
    await #expect(throws: ProviderError.signInRequired(account: "work", reason: ProviderError.notSignedIn)) { try await h.get() }
    #expect(try await store.refreshRecord() == nil)
    #expect(try await store.accessRecord(h.scopes) == nil)
  }

  @Test func aNewSignInDuringTheRefreshIsUsedInstead() async throws {
    let store = RecordingStore()
    let transport = FakeTransport { _, index in
      if index == 0 {
        try await store.putRefreshToken("RT-U2", identity: "user2@example.test")
        return HTTPResponse.json(#"{"token_type":"Bearer","access_token":"AT-U1","expires_in":3599,"refresh_token":"RT1b"}"#)
      }
      return HTTPResponse.json(#"{"token_type":"Bearer","access_token":"AT-U2","expires_in":3599,"refresh_token":"RT-U2b"}"#)
    }
    let h = Harness(transport, store: store)
    try await store.putRefreshToken("RT1")
    let t = try await h.get()
    #expect(t.accessToken == Secret("AT-U2"))
    #expect(t.identity == "user2@example.test")
    #expect(h.refreshTokensSent == ["RT1", "RT-U2"])
    #expect(try await store.refreshRecord()?.refreshToken == Secret("RT-U2b"))
    #expect(try await store.accessRecord(h.scopes)?.accessToken == Secret("AT-U2"))
  }

  @Test func aRotationByAnotherProcessOfTheSameSignInIsKept() async throws {
    let store = RecordingStore()
    let transport = FakeTransport { _, _ in
      try await store.putRefreshToken("RT-OTHER")
      return HTTPResponse.json(#"{"token_type":"Bearer","access_token":"AT2","expires_in":3599,"refresh_token":"RT2"}"#)
    }
    let h = Harness(transport, store: store)
    try await store.putRefreshToken("RT1")
    #expect(try await h.get().accessToken == Secret("AT2"))
    #expect(try await store.refreshRecord()?.refreshToken == Secret("RT-OTHER"))
  }
}
