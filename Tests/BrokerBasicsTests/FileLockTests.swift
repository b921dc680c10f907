import BrokerBasics
import Glibc
import Testing

@Suite struct FileLockTests {
  let directory: String

  init() {
    var template = Array("/tmp/filelock-XXXXXX".utf8CString)
    directory = String(cString: mkdtemp(&template)!)
  }

  func open(_ name: String) throws -> Int32 { try FileLock.open(directory + "/" + name).get() }

  @Test func oneHolderAtATimeBetweenDescriptorsOfOneProcess() throws {
    let a = try open("x.lock")
    let b = try open("x.lock")
    #expect(FileLock.attempt(a) == .locked)
    #expect(FileLock.attempt(b) == .busy)
    #expect(FileLock.attempt(b, shared: true) == .busy)
    close(a)  // closing releases it
    #expect(FileLock.attempt(b) == .locked)
    close(b)
  }

  @Test func sharedHoldersTogetherButNotWithAnExclusiveOne() throws {
    let a = try open("s.lock")
    let b = try open("s.lock")
    let c = try open("s.lock")
    #expect(FileLock.attempt(a, shared: true) == .locked)
    #expect(FileLock.attempt(b, shared: true) == .locked)
    #expect(FileLock.attempt(c) == .busy)
    [a, b, c].forEach { close($0) }
  }

  @Test func aWaitThatMayNotGoOnIsOneAttempt() throws {
    let a = try open("w.lock")
    let b = try open("w.lock")
    #expect(FileLock.attempt(a) == .locked)
    var asked = 0
    #expect(FileLock.wait(b, keepWaiting: { asked += 1; return false }) == .busy)
    #expect(asked == 1)
    var waits = 0
    #expect(FileLock.wait(b, maxPause: 2, keepWaiting: { waits += 1; return waits < 4 }) == .busy)
    #expect(waits == 4)
    close(a)
    #expect(FileLock.wait(b, keepWaiting: { true }) == .locked)
    close(b)
  }

  @Test func neverThroughASymbolicLinkAndErrorsAreSaid() throws {
    #expect(symlink(directory + "/target", directory + "/link.lock") == 0)
    #expect(throws: Errno(ELOOP)) { try FileLock.open(directory + "/link.lock").get() }
    #expect(throws: Errno(ENOENT)) { try FileLock.open(directory + "/missing/x.lock").get() }
    #expect(FileLock.attempt(-1) == .failed(Errno(EBADF)))
    var mode = stat()
    let fd = try open("mode.lock")
    #expect(fstat(fd, &mode) == 0)
    #expect(mode.st_mode & 0o777 == 0o600)
    close(fd)
  }
}
