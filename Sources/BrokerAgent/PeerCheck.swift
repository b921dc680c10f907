internal import CBrokerShims
import Glibc

/// The uid check every accepted connection passes before the agent reads a byte of it
/// (interface.md §8): `SO_PEERCRED` of the connected socket must name the agent's own uid.
public enum PeerCheck {
  /// The peer's credentials as the kernel recorded them at `connect()`, or nil when they cannot be
  /// read (then the connection is refused too).
  public static func peer(of fd: Int32) -> (uid: UInt32, pid: Int32)? {
    var uid = uid_t()
    var pid = pid_t()
    guard cbroker_peer_credentials(fd, &uid, &pid) == 0 else { return nil }
    return (uid, pid)
  }

  /// True when the peer of `fd` runs as `expectedUID`.
  public static func allows(_ fd: Int32, expectedUID: UInt32) -> Bool {
    peer(of: fd)?.uid == expectedUID
  }
}
