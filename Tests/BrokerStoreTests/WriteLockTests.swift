import Foundation
import Testing

@testable import BrokerStore

/// The lock `LibsecretStore.save` holds around create + read-back, so concurrent tokenbroker
/// processes do not fail each other's read-back (bug-cases.md B06).
@Suite("WriteLock")
struct WriteLockTests {
  @Test func aHeldLockMakesTheNextWaiterGiveUpThenIsFreeOnceDropped() throws {
    let path = TempDir().path + "/keyring.lock"
    var first = WriteLock(path: path, keepWaiting: { false })
    #expect(first != nil)
    var waits = 0
    let second = WriteLock(path: path, keepWaiting: {
      waits += 1
      return waits < 3
    })
    #expect(second == nil)
    #expect(waits == 3)
    first = nil
    #expect(WriteLock(path: path, keepWaiting: { false }) != nil)
  }

  @Test func aSymbolicLinkIsNotFollowed() throws {
    let dir = TempDir().path
    #expect(symlink(dir + "/elsewhere", dir + "/keyring.lock") == 0)
    #expect(WriteLock(path: dir + "/keyring.lock", keepWaiting: { true }) == nil)
    #expect(access(dir + "/elsewhere", F_OK) != 0)
  }
}
