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

  @Test func aDropWaitsForARefreshUnderWayAndLaterOnesWaitForTheDrop() async throws {
    let lock = StoreKeyUseLock(socketPath: socket(), patience: 10)
    let events = Events()
    async let refresh: Int? = lock.whileUsing {
      events.add("refresh started")
      try await Task.sleep(for: .milliseconds(300))
      events.add("refresh stored")
      return 1
    }
    try await Task.sleep(for: .milliseconds(50))
    async let drop = lock.exclusively {
      events.add("dropped")
      try? await Task.sleep(for: .milliseconds(200))
    }
    try await Task.sleep(for: .milliseconds(100))
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
