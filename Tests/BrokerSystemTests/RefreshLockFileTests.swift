import BrokerCore
import BrokerSystem
import Glibc
import Synchronization
import Testing

/// `refresh-ACCOUNT.lock` in the runtime directory: holders take turns, within one process as
/// between processes (each hold is its own open file description).
@Suite struct RefreshLockFileTests {
  func directory() throws -> String { String(cString: mkdtemp(strdup("/tmp/tb-refresh-lock-XXXXXX"))) }

  /// How many bodies run at once, and the most seen.
  final class Overlap: Sendable {
    let state = Mutex((inside: 0, most: 0))
    func enter() { state.withLock { $0.inside += 1; $0.most = max($0.most, $0.inside) } }
    func leave() { state.withLock { $0.inside -= 1 } }
    var most: Int { state.withLock { $0.most } }
  }

  @Test func holdersOfOneAccountTakeTurns() async throws {
    let lock = RefreshLockFile(runtimeDirectory: try directory())
    let overlap = Overlap()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask {
          try await lock.withLock(account: "work") {
            overlap.enter()
            try await Task.sleep(for: .milliseconds(20))
            overlap.leave()
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(overlap.most == 1)
  }

  @Test func otherAccountsDoNotWait() async throws {
    let dir = try directory()
    let lock = RefreshLockFile(runtimeDirectory: dir, patience: 0.05)
    let value = try await lock.withLock(account: "work") {
      try await lock.withLock(account: "personal") { 7 }
    }
    #expect(value == 7)
    var st = stat()
    #expect(lstat(dir + "/refresh-work.lock", &st) == 0 && st.st_mode & 0o777 == 0o600)
  }

  @Test func aHolderThatNeverEndsIsNamedAfterThePatience() async throws {
    let lock = RefreshLockFile(runtimeDirectory: try directory(), patience: 0.05)
    await #expect(throws: SystemError.refreshInProgress(account: "work")) {
      try await lock.withLock(account: "work") { try await lock.withLock(account: "work") {} }
    }
  }

  /// X07: a throttle's hold is a file beside the lock, so another process (here: another
  /// instance) honours it; it ends on time, and nil removes it.
  @Test func X07_aHoldIsSeenByEveryInstanceUntilItEnds() throws {
    let dir = try directory()
    let writer = RefreshLockFile(runtimeDirectory: dir)
    let reader = RefreshLockFile(runtimeDirectory: dir)
    let hold = RefreshHold(until: 1_000_060, host: "login.example.test", reason: "HTTP 429\nsecond line")
    writer.setHold(hold, account: "work")
    #expect(reader.hold(account: "work", now: 1_000_000)?.until == 1_000_060)
    #expect(reader.hold(account: "work", now: 1_000_000)?.reason == "HTTP 429 second line")
    #expect(reader.hold(account: "other", now: 1_000_000) == nil)
    #expect(reader.hold(account: "work", now: 1_000_060) == nil)
    writer.setHold(nil, account: "work")
    #expect(reader.hold(account: "work", now: 1_000_000) == nil)
    #expect(access(dir + "/refresh-work.hold", F_OK) != 0)
  }

  @Test func X07_aHoldFileThatIsNotOursStopsNothing() throws {
    let dir = try directory()
    let lock = RefreshLockFile(runtimeDirectory: dir)
    #expect(symlink("/etc/passwd", dir + "/refresh-a.hold") == 0)
    #expect(lock.hold(account: "a", now: 0) == nil)
    #expect(mkfifo(dir + "/refresh-b.hold", 0o600) == 0)
    #expect(lock.hold(account: "b", now: 0) == nil)  // does not block on the FIFO
    let fd = open(dir + "/refresh-c.hold", O_WRONLY | O_CREAT, 0o600)
    _ = "garbage\n".withCString { write(fd, $0, 8) }
    close(fd)
    #expect(lock.hold(account: "c", now: 0) == nil)
  }
}
