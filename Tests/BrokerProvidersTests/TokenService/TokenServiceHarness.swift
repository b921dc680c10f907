import BrokerCore
import BrokerTestSupport

@testable import BrokerProviders

/// A `TokenService` over a recording store, a fake transport and a fake clock.
struct Harness {
  let store: RecordingStore
  let time = FakeTime(now: Fixtures.start)
  let warnings = Warnings()
  let transport: FakeTransport
  let states = MemoryAccountStates()
  let service: TokenService
  let scopes = ScopeSet([Fixtures.graph])

  init(_ replies: [FakeTransport.Reply], config: BrokerConfig = Fixtures.config()) {
    self.init(FakeTransport(replies), config: config)
  }

  init(
    _ transport: FakeTransport, config: BrokerConfig = Fixtures.config(), store: RecordingStore = RecordingStore(),
    refreshLock: any RefreshLock = NoRefreshLock(), diagnostics: Diagnostics = .off
  ) {
    self.store = store
    self.transport = transport
    let warnings = self.warnings
    service = TokenService(
      config: config, store: store, transport: transport, time: time, refreshLock: refreshLock, accountStates: states,
      diagnostics: diagnostics, warn: { warnings.add($0) })
  }

  func get(scopes: ScopeSet? = nil, minValid: Int? = nil, force: Bool = false) async throws -> IssuedToken {
    try await service.accessToken(account: "work", scopes: scopes, minValid: minValid, forceRefresh: force)
  }

  /// The refresh tokens sent to the token endpoint, in order.
  var refreshTokensSent: [String] { transport.requests.compactMap { $0.formFields["refresh_token"] } }
}
