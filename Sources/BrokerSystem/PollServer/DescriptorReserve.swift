import BrokerWire
import Glibc

/// The descriptors a `PollServer` leaves free for the rest of its process. Connections alone
/// must never use up `RLIMIT_NOFILE`: a process out of descriptors fails far from the server
/// (GLib aborts the whole process when it cannot make the pipe of a `GWakeup`, which a first
/// libsecret call makes).
struct DescriptorReserve: Sendable {
  /// The soft descriptor limit when the server was made.
  let limit: Int
  /// Descriptors kept free: a quarter of the limit, at least 64, at most half of it.
  let kept: Int
  /// Connections that fit in what was free when the server was made, less `kept`.
  let connectionRoom: Int

  init(limit: Int = DescriptorReserve.softLimit(), inUse: Int = DescriptorReserve.openDescriptors()) {
    self.limit = limit
    kept = Self.kept(limit: limit)
    connectionRoom = max(1, limit - kept - inUse)
  }

  /// Kept free under a soft limit of `limit`: `max(64, limit / 4)`, at most `limit / 2`.
  static func kept(limit: Int) -> Int { min(max(64, limit / 4), limit / 2) }

  /// False when the connection just accepted as `fd` leaves less than half of `kept` above it
  /// (something else in the process uses the descriptors): it takes the place of the reader
  /// waiting longest, or is closed unread. The kernel gives the lowest free number, so every
  /// lower one is in use.
  func leavesRoom(after fd: Int32) -> Bool { Int(fd) < limit - kept / 2 }

  static func softLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
    return Int(min(limit.rlim_cur, 1 << 20))  // RLIM_INFINITY is the largest value
  }

  /// How many descriptors this process has open (`Spawn.openDescriptors`); 16 when `/proc`
  /// cannot be read.
  static func openDescriptors() -> Int {
    let open = Spawn.openDescriptors()
    return open.isEmpty ? 16 : open.count
  }

  /// One descriptor held open on `/dev/null` to trade for a connection when `accept` fails with
  /// EMFILE or ENFILE: closed, the connection accepted and closed at once, reopened. Without it
  /// the pending connection stays in the backlog, the listening socket stays readable, and the
  /// loop spins.
  struct Spare {
    private var fd: Int32 = Spare.open()

    private static func open() -> Int32 { Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }

    /// Drops one pending connection of `listening` with the spare's descriptor; false when there
    /// is no spare (it could not be reopened) or no connection was taken.
    mutating func refuseOne(_ listening: Int32) -> Bool {
      guard fd >= 0 else {
        fd = Spare.open()
        return false
      }
      Glibc.close(fd)
      let taken = accept(listening, nil, nil)
      if taken >= 0 { Glibc.close(taken) }
      fd = Spare.open()
      return taken >= 0
    }

    mutating func release() {
      if fd >= 0 { Glibc.close(fd) }
      fd = -1
    }
  }
}
