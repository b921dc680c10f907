import BrokerCore
import BrokerTestSupport
import Synchronization
import Testing

/// The `--verbose` sink and its two decorators.
@Suite struct DiagnosticsTests {
  final class Lines: Sendable {
    let all = Mutex<[String]>([])
    var diagnostics: Diagnostics { Diagnostics { line in self.all.withLock { $0.append(line) } } }
    var list: [String] { all.withLock { $0 } }
  }

  @Test func offNeverBuildsALine() {
    let built = Mutex(0)
    func line() -> String { built.withLock { $0 += 1 }; return "x" }
    Diagnostics.off.note(line())
    #expect(built.withLock { $0 } == 0)
    #expect(!Diagnostics.off.isOn)
  }

  @Test func requestsShowMethodEndpointStatusAndDurationButNoQueryHeaderOrBody() async throws {
    let lines = Lines()
    let base = FakeTransport([.json(#"{"access_token":"AT-SECRET-1"}"#)])
    let transport = DiagnosedTransport(base, diagnostics: lines.diagnostics)
    var request = HTTPRequest.form(url: "https://idp.example/t/token?code=CODE-SECRET", fields: [("refresh_token", "RT-SECRET")])
    request.headers.append(HTTPHeader("Authorization", "Basic Q0xJRU5ULVNFQ1JFVA=="))
    _ = try await transport.send(request)
    let line = try #require(lines.list.first)
    #expect(line.hasPrefix("HTTP POST https://idp.example/t/token: 200 in "))
    #expect(line.hasSuffix(" ms"))
    for secret in ["CODE", "RT-SECRET", "AT-SECRET", "Q0xJRU5U"] { #expect(!line.contains(secret)) }
  }

  @Test func aFailedRequestNamesOnlyTheErrorType() async {
    let lines = Lines()
    let transport = DiagnosedTransport(FakeTransport([]), diagnostics: lines.diagnostics)
    _ = try? await transport.send(HTTPRequest.form(url: "https://idp.example/token", fields: []))
    #expect(lines.list.first?.hasPrefix("HTTP POST https://idp.example/token: failed (HTTPError) in ") == true)
  }

  @Test func storeOperationsShowTheItemAndOutcomeNeverTheSecret() async throws {
    let lines = Lines()
    let store = DiagnosedStore(InMemorySecretStore(), diagnostics: lines.diagnostics)
    let key = ItemKey.refreshToken("work")
    _ = try await store.load(key)
    try await store.save(key, label: "l", secret: Secret("RT-SECRET-2"))
    _ = try await store.load(key)
    try await store.deleteAll(account: "work")
    let list = lines.list
    #expect(list.count == 5)
    #expect(list[0].hasPrefix("store: read work/refresh-token: none in "))
    #expect(list[1].hasPrefix("store: write work/refresh-token: done in "))
    #expect(list[2].hasPrefix("store: read work/refresh-token: found in "))
    #expect(list[3].hasPrefix("store: list items of work: 1 in "))
    #expect(list[4].hasPrefix("store: delete work/refresh-token: done in "))
    #expect(!list.joined().contains("RT-SECRET"))
  }
}
