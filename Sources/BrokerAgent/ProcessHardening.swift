internal import CBrokerShims
import Glibc

/// What the agent does to its own process before it holds a token (architecture.md, "Agent rules").
public enum ProcessHardening {
  /// `PR_SET_DUMPABLE = 0` (no core dumps, no ptrace by same-uid processes), SIGPIPE ignored (a
  /// client that goes away must not end the agent), umask 077 (files it makes are private).
  /// - Returns: false when `prctl` failed (the agent still runs).
  @discardableResult
  public static func apply() -> Bool {
    signal(SIGPIPE, SIG_IGN)
    umask(0o077)
    return disableDumping()
  }

  /// `PR_SET_DUMPABLE = 0` alone, for `tokenbroker exec`, which holds tokens while COMMAND runs
  /// (whose own umask and signals stay as they were; execve makes it dumpable again).
  /// - Returns: false when `prctl` failed.
  @discardableResult
  public static func disableDumping() -> Bool { cbroker_disable_dumping() == 0 }
}
