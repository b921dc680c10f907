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
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { return nil }
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR, keepWaiting() else {
        close(fd)
        return nil
      }
      usleep(5_000)
    }
    self.fd = fd
  }

  deinit { close(fd) }
}
