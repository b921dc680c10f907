import BrokerCore
import Foundation
import Testing

@testable import BrokerHTTP

/// Proxy variables are process-wide and every libcurl handle reads them, so setting one here would
/// leak into tests running in parallel (and into subprocesses they start). The request therefore
/// runs in a child copy of this test binary, started with `https_proxy` set.
@Suite struct ProxyEnvironmentTests {
  /// In the child: the parent's plain-HTTP test server port.
  static let childMarker = "TOKENBROKER_HTTP_PROXY_CHILD"
  static var isChild: Bool { ProcessInfo.processInfo.environment[childMarker] != nil }

  @Test(.enabled(if: !isChild), .timeLimit(.minutes(1)))
  func deadHTTPSProxyIsCannotConnect() throws {
    let server = try TestServer.get()
    var environment = ProcessInfo.processInfo.environment
    for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
      environment[name] = nil
    }
    environment["https_proxy"] = "http://127.0.0.1:\(server.dead)"
    environment[Self.childMarker] = String(server.http)
    environment["NO_COLOR"] = "1"
    let child = Process()
    child.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    child.arguments = [
      "--testing-library", "swift-testing",
      "--filter", "BrokerHTTPTests.ProxyEnvironmentTests/requestThroughDeadProxyInChild",
    ]
    child.environment = environment
    let output = Pipe()
    child.standardOutput = output
    child.standardError = output
    try child.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    child.waitUntilExit()
    #expect(child.terminationStatus == 0, "child test output:\n\(text)")
    // A skipped child test would also exit 0.
    #expect(text.contains("requestThroughDeadProxyInChild() passed"), "child test output:\n\(text)")
  }

  @Test(.enabled(if: isChild))
  func requestThroughDeadProxyInChild() async throws {
    let transport = CurlTransport()
    // With a proxy, libcurl connects to the proxy only: nothing leaves this machine.
    await #expect(throws: HTTPError.cannotConnect(host: "example.com")) {
      try await transport.send(HTTPRequest(method: "GET", url: "https://example.com/"))
    }
    // Loopback hosts never go through the proxy.
    let port = ProcessInfo.processInfo.environment[Self.childMarker] ?? ""
    let reply = try await transport.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/json"))
    #expect(reply.status == 200)
  }
}
