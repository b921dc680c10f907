import BrokerCore
import BrokerProviders
import BrokerTestSupport
import Testing

/// The project number exec serves at `project/numeric-project-id` (interface.md §2.1; X10).
@Suite struct GoogleProjectNumberTests {
  static func account(number: String? = nil, project: String? = "demo-proj") -> AccountConfig {
    var a = AccountConfig(name: "g", provider: .google)
    a.project = project
    a.projectNumber = number
    a.resourceManagerEndpoint = "https://rm.example.test"
    return a
  }

  static func lookup(_ transport: FakeTransport, _ account: AccountConfig = account(), cache: any DiscoveryCache = MemoryDiscoveryCache())
    -> GoogleProjectNumber
  {
    GoogleProjectNumber(account: account, transport: transport, caFiles: [], cache: cache, time: FakeTime())
  }

  @Test func test_X10_theConfiguredNumberAsksNothing() async throws {
    let transport = FakeTransport([])
    let number = try await Self.lookup(transport, Self.account(number: "42")).number { Issue.record("token asked"); return Secret("t") }
    #expect(number == "42")
    #expect(transport.requests.isEmpty)
  }

  @Test func test_X10_projectsGetWithTheAccountsTokenOnceThenFromTheCache() async throws {
    let transport = FakeTransport([.json(#"{"projectNumber":"271828182845","projectId":"demo-proj"}"#)])
    let cache = MemoryDiscoveryCache()
    for _ in 0..<2 {
      #expect(try await Self.lookup(transport, cache: cache).number { Secret("GAT") } == "271828182845")
    }
    #expect(transport.requests.count == 1)
    #expect(transport.requests[0].url == "https://rm.example.test/v1/projects/demo-proj")
    #expect(transport.requests[0].headers.contains { $0.name == "Authorization" && $0.value == "Bearer GAT" })
  }

  @Test func test_X10_aRefusalNamesProjectNumberAnOutageIsUnavailable() async {
    await #expect(throws: ConfigError.self) {
      try await Self.lookup(FakeTransport([.json(#"{"error":{"code":403}}"#, status: 403)])).number { Secret("t") }
    }
    await #expect(throws: ConfigError.self) {
      try await Self.lookup(FakeTransport([.json(#"{"projectNumber":"x1"}"#)])).number { Secret("t") }
    }
    do {
      _ = try await Self.lookup(FakeTransport([.json("{}", status: 503)])).number { Secret("t") }
      Issue.record("no error")
    } catch let e as ProviderError {
      guard case .unavailable = e else { Issue.record("\(e)"); return }
    } catch { Issue.record("\(error)") }
  }
}
