import BrokerBasics
internal import Glibc

/// An exclusive `flock` on a file that every tokenbroker process takes around one `save` (create,
/// read-back, clean-up), so two processes writing the same item never read back each other's value
/// and report a false `readBackMismatch` (bug-cases.md B06). Released when dropped or when the
/// process dies.
final class WriteLock {
  private let fd: Int32

  /// Takes the lock on `path` (created 0600, never through a symbolic link), waiting while
  /// `keepWaiting` says so. Nil when the file cannot be opened or the wait ends: the caller then
  /// writes without it (the read-back still checks the store; the operation's deadline still
  /// bounds it).
  init?(path: String, keepWaiting: () -> Bool) {
    guard let fd = try? FileLock.open(path).get() else { return nil }
    guard FileLock.wait(fd, maxPause: 5, keepWaiting: keepWaiting) == .locked else {
      close(fd)
      return nil
    }
    self.fd = fd
  }

  deinit { close(fd) }
}
