import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

@Suite struct TokenServiceRevokeTests {
  @Test func azureHasNoEndpointAndSendsNothing() async throws {
    let h = Harness([])
    try await h.store.putRefreshToken("RT1")
    let report = try await h.service.revokeAtProvider(account: "work")
    #expect(report.outcome == .noEndpoint)
    #expect(report.failure == nil)
    #expect(h.transport.requests.isEmpty)
    #expect(try await h.store.refreshRecord() != nil)  // deleting is the caller's next step
  }

  @Test func notSignedInHasNothingToRevoke() async throws {
    let h = Harness([])
    let report = try await h.service.revokeAtProvider(account: "work")
    #expect(report.outcome == nil)
    #expect(report.failure == nil)
  }

  @Test func aLockedStoreFailsBeforeAnything() async throws {
    struct Locked: SecretStore {
      func load(_ key: ItemKey) async throws -> Secret? { throw StoreError.locked }
      func save(_ key: ItemKey, label: String, secret: Secret) async throws { throw StoreError.locked }
      func delete(_ key: ItemKey) async throws { throw StoreError.locked }
      func keys(account: String?) async throws -> [ItemKey] { throw StoreError.locked }
    }
    let service = TokenService(
      config: Fixtures.config(), store: Locked(), transport: FakeTransport([]), time: FakeTime(), warn: { _ in })
    await #expect(throws: StoreError.locked) { try await service.revokeAtProvider(account: "work") }
  }
}
