import Glibc

/// Lock files held with flock(2) on their own open file description: released when the
/// descriptor is closed or the process dies, so an abandoned holder never blocks the next; and
/// exclusive between descriptors of one process as between processes. The one way every lock of
/// the program is opened and taken, in the three ways git's lockfile API offers (lockfile.h):
/// once, until the caller stops waiting (a deadline) with a pause that grows, or for ever.
/// The pause starts at 1 ms and doubles, so a lock held briefly costs a waiter about a
/// millisecond, and a long wait costs the holder one attempt per `maxPause` ms.
public enum FileLock {
  /// What one attempt, or a wait, came to.
  public enum Outcome: Equatable, Sendable {
    case locked
    /// Another descriptor holds it (and the wait, if any, ended).
    case busy
    /// flock(2) failed otherwise (`EBADF`, `ENOLCK`).
    case failed(Errno)
  }

  /// Opens `path` for locking: created 0600 if missing, never through a symbolic link, closed on
  /// exec. - Returns: the descriptor, or the `Errno` of open(2) (`ENOENT`: no such directory;
  /// `ELOOP`: a symbolic link).
  public static func open(_ path: String) -> Result<Int32, Errno> {
    let fd = retryingOnInterrupt { Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600) }
    return fd >= 0 ? .success(fd) : .failure(.current)
  }

  /// One attempt, without waiting.
  /// - Parameter shared: `LOCK_SH` (many holders) instead of `LOCK_EX`.
  public static func attempt(_ fd: Int32, shared: Bool = false) -> Outcome {
    if retryingOnInterrupt({ flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) }) == 0 { return .locked }
    let error = Errno.current
    return error.code == EWOULDBLOCK ? .busy : .failed(error)
  }

  /// Tries, then pauses (1 ms, doubling up to `maxPause` ms) and tries again while `keepWaiting`
  /// says so: `{ false }` is one attempt, `{ true }` for ever, a deadline check a bounded wait.
  /// Sleeps the calling thread: for the front, the agent's setup and dedicated threads, never the
  /// cooperative pool (`LockFiles.take` in BrokerSystem is the same wait for a task; it is not
  /// here, so the front links no concurrency runtime).
  public static func wait(
    _ fd: Int32, shared: Bool = false, maxPause: Int = 20, keepWaiting: () -> Bool
  ) -> Outcome {
    var pause = 1
    while true {
      let outcome = attempt(fd, shared: shared)
      guard outcome == .busy, keepWaiting() else { return outcome }
      var ts = timespec(tv_sec: pause / 1000, tv_nsec: (pause % 1000) * 1_000_000)
      _ = nanosleep(&ts, nil)
      pause = min(pause * 2, maxPause)
    }
  }
}
