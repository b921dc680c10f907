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
}
