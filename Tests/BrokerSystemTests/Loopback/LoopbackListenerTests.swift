@testable import BrokerSystem
import Foundation
import Glibc
import Testing

/// The loopback redirect listener against real sockets (RFC 8252 §7.3; bug-cases.md B26). Serialized:
/// a port freed by one test may be handed to the next listener at once.
@Suite(.serialized) struct LoopbackListenerTests {
  /// Ends the wait on `GET /done?…`, answers 400 to `/` and 404 to anything else.
  static let handler: @Sendable (LoopbackRequest) -> LoopbackReply<String> = { request in
    switch request.path {
    case "/done": return LoopbackReply(status: 200, page: "ok", result: request.query)
    case "/": return LoopbackReply(status: 400, page: "no")
    default: return LoopbackReply(status: 404, page: LoopbackPage.notFound)
    }
  }

  @Test func answersUntilOneRequestFinishesThenCloses() async throws {
    let listener = try LoopbackListener(port: nil, ipv6: false)
    #expect(listener.port > 0)
    let port = listener.port
    let serving = Task { try await listener.serve(timeout: 20, handler: Self.handler) }
    #expect(await LoopbackTestClient.asyncGet(port: port, "/favicon.ico")?.status == 404)
    #expect(await LoopbackTestClient.asyncGet(port: port, "/?code=x&state=wrong")?.status == 400)
    let head = await LoopbackTestClient.asyncGet(port: port, "/", method: "HEAD")
    #expect(head?.status == 400)
    #expect(head?.text.hasSuffix("\r\n\r\n") == true)  // no body for HEAD
    let done = await LoopbackTestClient.asyncGet(port: port, "/done?code=AC&state=S#frag")
    #expect(done?.status == 200)
    #expect(done?.text.contains("Cache-Control: no-store") == true)
    #expect(done?.text.contains("Referrer-Policy: no-referrer") == true)
    guard case .finished(let query) = try await serving.value else { Issue.record("not finished"); return }
    #expect(query == "code=AC&state=S")
    // Closed: refused, or (while a test in parallel spawns a child that briefly holds copies of
    // our descriptors) accepted and closed unanswered. Never answered.
    let again = await LoopbackTestClient.asyncGet(port: port, "/done?again")
    #expect(again == nil || again?.status == 0, "\(String(describing: again))")
  }

  /// True when the kernel lists ::1 on `lo` (`/proc/net/if_inet6`). The IPv6 tests need it and
  /// are skipped, saying so, without it; with it, failing to use [::1] is a failure, not a skip
  /// (IPv4 only is the fallback for machines without IPv6, not for a listener that cannot bind).
  static let hasIPv6Loopback =
    ((try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8)) ?? "").split(separator: "\n")
    .contains { $0.hasPrefix("00000000000000000000000000000001 ") }

  @Test(.enabled(if: LoopbackListenerTests.hasIPv6Loopback, "this machine has no ::1 (/proc/net/if_inet6)"))
  func servesIPv6LoopbackOnTheSamePortWhenAsked() async throws {
    let listener = try LoopbackListener(port: nil, ipv6: true)
    try #require(listener.servesIPv6, "::1 exists but the listener did not bind it")
    let serving = Task { try await listener.serve(timeout: 20, handler: Self.handler) }
    #expect(await LoopbackTestClient.asyncGet(port: listener.port, "/x", host: "[::1]:\(listener.port)", ipv6: true)?.status == 404)
    #expect(await LoopbackTestClient.asyncGet(port: listener.port, "/done?v6", host: "localhost:\(listener.port)", ipv6: true)?.status == 200)
    guard case .finished("v6") = try await serving.value else { Issue.record("not finished"); return }
  }

  @Test func anIdlePreconnectionDoesNotDelayTheRealRequest() async throws {
    let listener = try LoopbackListener(port: nil, ipv6: false)
    let serving = Task { try await listener.serve(timeout: 20, handler: Self.handler) }
    let idle = try #require(LoopbackTestClient.connect(port: listener.port))
    defer { close(idle) }
    #expect(await LoopbackTestClient.asyncGet(port: listener.port, "/done?fast")?.status == 200)
    guard case .finished("fast") = try await serving.value else { Issue.record("not finished"); return }
  }

  @Test func foreignHostHeadersAndMalformedRequestsNeverReachTheHandler() async throws {
    let listener = try LoopbackListener(port: nil, ipv6: false)
    let port = listener.port
    let serving = Task { try await listener.serve(timeout: 20, handler: Self.handler) }
    #expect(await LoopbackTestClient.asyncGet(port: port, "/done?rebound", host: "evil.example:\(port)")?.status == 400)
    #expect(await LoopbackTestClient.asyncExchange(port: port, raw: "garbage\r\n\r\n")?.status == 400)
    let huge = "GET /done?" + String(repeating: "a", count: 20_000) + " HTTP/1.1\r\n\r\n"
    #expect(await LoopbackTestClient.asyncExchange(port: port, raw: huge)?.status == 431)
    #expect(await LoopbackTestClient.asyncGet(port: port, "/done?real", host: "localhost:\(port)")?.status == 200)
    guard case .finished("real") = try await serving.value else { Issue.record("not finished"); return }
  }

  @Test func idleConnectionsInEverySlotDoNotKeepTheRealRequestOut() async throws {
    let listener = try LoopbackListener(port: nil, ipv6: false)
    let serving = Task { try await listener.serve(timeout: 20, handler: Self.handler) }
    let port = listener.port
    let idle = await LoopbackTestClient.off { (0..<48).compactMap { _ in LoopbackTestClient.connect(port: port) } }
    defer { for fd in idle { close(fd) } }
    // Every place is taken by an idle connection before the real one comes.
    let full = min(idle.count, LoopbackListener.maxConnections)
    #expect(await Self.waitFor { listener.server.state.withLock { $0.open } == full })
    #expect(await LoopbackTestClient.asyncGet(port: listener.port, "/done?through")?.status == 200)
    guard case .finished("through") = try await serving.value else { Issue.record("not finished"); return }
  }

  @Test func twoHostHeadersAreRefused() async throws {
    let listener = try LoopbackListener(port: nil, ipv6: false)
    let port = listener.port
    let serving = Task { try await listener.serve(timeout: 20, handler: Self.handler) }
    for hosts in [("evil.example", "127.0.0.1:\(port)"), ("127.0.0.1:\(port)", "evil.example")] {
      let raw = "GET /done?two HTTP/1.1\r\nHost: \(hosts.0)\r\nHost: \(hosts.1)\r\n\r\n"
      #expect(await LoopbackTestClient.asyncExchange(port: port, raw: raw)?.status == 400)
    }
    #expect(await LoopbackTestClient.asyncGet(port: port, "/done?one")?.status == 200)
    guard case .finished("one") = try await serving.value else { Issue.record("not finished"); return }
  }

  @Test func timesOutAndCloses() async throws {
    let listener = try LoopbackListener(port: nil, ipv6: false)
    let outcome = try await listener.serve(timeout: 0.3, handler: Self.handler)
    guard case .timedOut = outcome else { Issue.record("not timed out"); return }
    let late = await LoopbackTestClient.asyncGet(port: listener.port, "/done")
    #expect(late == nil || late?.status == 0)
  }

  @Test func cancellationEndsTheWaitAtOnce() async throws {
    let listener = try LoopbackListener(port: nil, ipv6: false)
    let serving = Task { try await listener.serve(timeout: 60, handler: Self.handler) }
    #expect(await LoopbackTestClient.asyncGet(port: listener.port, "/favicon.ico")?.status == 404)  // waiting
    serving.cancel()
    await #expect(throws: CancellationError.self) { try await serving.value }
  }

  @Test func aFixedPortInUseSaysWhatToDo() throws {
    let first = try LoopbackListener(port: nil, ipv6: false)
    let error = #expect(throws: SystemError.self) { try LoopbackListener(port: first.port, ipv6: false) }
    #expect("\(error!)".contains("redirect-port"))
    withExtendedLifetime(first) {}
  }

  /// `localhost` may resolve to ::1 first, so a fixed port another program holds
  /// on ::1 only is refused (naming the port) instead of served on 127.0.0.1 alone.
  @Test(.enabled(if: LoopbackListenerTests.hasIPv6Loopback, "this machine has no ::1 (/proc/net/if_inet6)"))
  func aFixedPortTakenOnIPv6LoopbackOnlyIsRefused() throws {
    let (held, port) = try #require(Self.holdIPv6Loopback(), "::1 exists but no socket could listen on it")
    defer { close(held) }
    let error = #expect(throws: SystemError.self) { try LoopbackListener(port: port, ipv6: true) }
    #expect(error == .redirectPortTaken(port: port, address: "[::1]"))
    #expect("\(error!)".contains("port \(port)"))
    // Without `ipv6` (a 127.0.0.1 redirect) the port is still free where the browser is sent.
    #expect(try LoopbackListener(port: port, ipv6: false).port == port)
  }

  @Test(.enabled(if: LoopbackListenerTests.hasIPv6Loopback, "this machine has no ::1 (/proc/net/if_inet6)"))
  func aRandomPortIsFreeOnBothLoopbackAddresses() throws {
    for _ in 0..<4 {
      let listener = try LoopbackListener(port: nil, ipv6: true)
      try #require(listener.servesIPv6, "::1 exists but the listener did not bind it")
      #expect(listener.port > 0)
    }
  }

  /// Whether `condition` holds within 10 s (a "does not hang" bound), looked at every 10 ms.
  static func waitFor(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<1000 {
      if condition() { return true }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
  }

  /// A listening socket on [::1] (kernel-chosen port), or nil without IPv6 loopback.
  static func holdIPv6Loopback() -> (Int32, Int)? {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    guard ok else { close(fd); return nil }
    return (fd, Int(UInt16(bigEndian: address.sin6_port)))
  }

  @Test func aFixedFreePortIsUsed() throws {
    let probe = try LoopbackListener(port: nil, ipv6: false)
    let port = probe.port
    probe.stop()
    _ = consume probe
    let listener = try LoopbackListener(port: port, ipv6: false)
    #expect(listener.port == port)
  }

  @Test func pagesEscapeWhatTheyShow() {
    let page = LoopbackPage.failure(account: "<w>", error: "x\"&", detail: "a\u{1b}[31m'")
    #expect(page.contains("&lt;w&gt;"))
    #expect(page.contains("x&quot;&amp;"))
    #expect(page.contains("a[31m&#39;"))
    #expect(!page.contains("\u{1b}"))
  }
}
