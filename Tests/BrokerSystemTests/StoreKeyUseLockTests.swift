import BrokerSystem
import Glibc
import Synchronization
import Testing

/// `SOCKET.key.lock` and `SOCKET.key.gate`: a drop waits for the refreshes already under way, and
/// refreshes that begin while it waits run only after it (bug-cases-3.md X16).
@Suite struct StoreKeyUseLockTests {
  func socket() -> String { String(cString: mkdtemp(strdup("/tmp/tb-key-use-XXXXXX"))) + "/agent.sock" }

  final class Events: Sendable {
    let list = Mutex<[String]>([])
    func add(_ e: String) { list.withLock { $0.append(e) } }
    var all: [String] { list.withLock { $0 } }
  }

  /// Whether another open file holds `path`'s flock exclusively (a shared try fails).
  static func isHeldExclusively(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
  }

  /// Polls `condition` every 10 ms until it holds; a test failure after `seconds`.
  func waitUntil(seconds: Double = 20, _ condition: () -> Bool) async throws {
    var waited = 0.0
    while !condition() {
      if waited > seconds {
        Issue.record("the condition did not hold within \(seconds) s")
        return
      }
      try await Task.sleep(for: .milliseconds(10))
      waited += 0.01
    }
  }

  @Test func aDropWaitsForARefreshUnderWayAndLaterOnesWaitForTheDrop() async throws {
    let lock = StoreKeyUseLock(socketPath: socket(), patience: 10)
    let events = Events()
    async let refresh: Int? = lock.whileUsing {
      events.add("refresh started")
      try await Task.sleep(for: .milliseconds(300))
      events.add("refresh stored")
      return 1
    }
    try await waitUntil { events.all.contains("refresh started") }
    async let drop = lock.exclusively {
      events.add("dropped")
      try? await Task.sleep(for: .milliseconds(200))
    }
    try await waitUntil { Self.isHeldExclusively(lock.gatePath) }
    async let late: Int? = lock.whileUsing {
      events.add("late refresh")
      return 2
    }
    #expect(try await refresh == 1)
    #expect(await drop.drained)
    #expect(try await late == 2)
    #expect(events.all == ["refresh started", "refresh stored", "dropped", "late refresh"])
  }

  @Test func aStuckRefreshIsWaitedForOnlyThePatience() async throws {
    let lock = StoreKeyUseLock(socketPath: socket(), patience: 0.2)
    let drained = try await lock.whileUsing { await lock.exclusively {}.drained }
    #expect(drained == false)
  }

  @Test func noSocketDirectoryMeansNoAgentAndNoLock() async throws {
    let lock = StoreKeyUseLock(socketPath: "/nonexistent-tb/agent.sock")
    #expect(try await lock.whileUsing { 3 } == 3)
    #expect(await lock.exclusively { 4 }.value == 4)
  }
}
