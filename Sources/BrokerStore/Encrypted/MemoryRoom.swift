internal import BrokerCore
internal import BrokerWire
internal import Glibc

/// How much more memory this process may take before a limit stops it, for Argon2id's work area
/// (bug-cases-3.md X15). The limits read, the tightest winning:
/// - `RLIMIT_AS` (`ulimit -v`) less `VmSize`, and `RLIMIT_DATA` (`ulimit -d`) less `VmData`
///   (`/proc/self/status`): an allocation over them fails cleanly (`crypto_pwhash` returns -1);
/// - the memory cgroup of this process and each one above it: cgroup v2 `memory.max` less
///   `memory.current`, v1 `memory.limit_in_bytes` less `memory.usage_in_bytes`, each plus the
///   file page cache, which the kernel reclaims before it kills (`active_file` and
///   `inactive_file` in `memory.stat`; v1: their `total_` forms, which count the cgroups below);
/// - the machine: `MemAvailable` plus `SwapFree` (`/proc/meminfo`).
/// Going over a cgroup's or the machine's memory gets the process killed by the OOM killer rather
/// than an error, which is why the room is measured before Argon2id runs. Unreadable files count
/// as no limit.
public struct MemoryRoom: Sendable, Equatable, CustomStringConvertible {
  /// Bytes the tightest limit leaves, or nil when no limit was found.
  public var bytes: UInt64?
  /// That limit, named as a user looks it up (`RLIMIT_AS (ulimit -v)`, a cgroup's `memory.max`).
  public var limit: String

  public init(bytes: UInt64?, limit: String) {
    self.bytes = bytes
    self.limit = limit
  }

  /// Nothing limits this process (or nothing could be read).
  public static let unlimited = MemoryRoom(bytes: nil, limit: "")

  /// "RLIMIT_AS (ulimit -v) leaves about 120 MiB", or "" when unlimited.
  public var description: String {
    guard let bytes else { return "" }
    return "\(limit) leaves about \(bytes >> 20) MiB"
  }

  /// The room of this process now.
  public static func current() -> MemoryRoom {
    func soft(_ resource: __rlimit_resource_t) -> UInt64? {
      var limit = rlimit()
      guard getrlimit(resource, &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
      return UInt64(limit.rlim_cur)
    }
    return measure(
      addressSpace: soft(__rlimit_resource_t(RLIMIT_AS.rawValue)), data: soft(__rlimit_resource_t(RLIMIT_DATA.rawValue)),
      read: readSmallFile)
  }

  /// The room from the soft limits given (nil: unlimited) and the files `read` returns (their
  /// text, or nil when absent), at their usual paths under `/proc` and `/sys/fs/cgroup`.
  static func measure(addressSpace: UInt64?, data: UInt64?, read: (String) -> String?) -> MemoryRoom {
    var best = MemoryRoom.unlimited
    func offer(_ bytes: UInt64, _ limit: String) {
      if best.bytes.map({ bytes < $0 }) ?? true { best = MemoryRoom(bytes: bytes, limit: limit) }
    }
    let status = read("/proc/self/status").map(kilobyteFields) ?? [:]
    if let addressSpace { offer(addressSpace.subtractingClamped(status["VmSize"] ?? 0), "RLIMIT_AS (ulimit -v)") }
    if let data { offer(data.subtractingClamped(status["VmData"] ?? 0), "RLIMIT_DATA (ulimit -d)") }
    for (limit, room) in cgroupRooms(read: read) { offer(room, limit) }
    if let info = read("/proc/meminfo").map(kilobyteFields), let available = info["MemAvailable"] {
      offer(available + (info["SwapFree"] ?? 0), "the machine's free memory (MemAvailable)")
    }
    return best
  }

  /// (the limit's name, bytes it leaves) for every limited memory cgroup this process is in.
  private static func cgroupRooms(read: (String) -> String?) -> [(String, UInt64)] {
    var rooms: [(String, UInt64)] = []
    for line in (read("/proc/self/cgroup") ?? "").split(separator: "\n") {
      let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
      guard fields.count == 3 else { continue }
      let path = fields[2].split(separator: "/").map(String.init)
      let v2 = fields[0] == "0" && fields[1].isEmpty
      guard v2 || fields[1].split(separator: ",").contains("memory") else { continue }
      let mount = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory"
      let (max, usage) = v2 ? ("memory.max", "memory.current") : ("memory.limit_in_bytes", "memory.usage_in_bytes")
      // This cgroup and every one above it (a container may see only its own as the root).
      for depth in stride(from: path.count, through: 0, by: -1) {
        let directory = ([mount] + path[0..<depth]).joined(separator: "/")
        guard let limit = read(directory + "/" + max).flatMap(number), limit < 1 << 62,
          let used = read(directory + "/" + usage).flatMap(number)
        else { continue }
        let stat = read(directory + "/memory.stat").map(spaceFields) ?? [:]
        func field(_ name: String) -> UInt64 { stat["total_" + name] ?? stat[name] ?? 0 }
        let cache = field("active_file") + field("inactive_file")
        rooms.append(("the cgroup's \(max) (\(directory))", (limit + cache).subtractingClamped(used)))
      }
    }
    return rooms
  }

  private static func number(_ text: String) -> UInt64? {
    UInt64(text.trimmingSpaces())  // "max" is no number: no limit
  }

  /// `Key: N kB` lines as bytes.
  private static func kilobyteFields(_ text: String) -> [String: UInt64] {
    var out: [String: UInt64] = [:]
    for line in text.split(separator: "\n") {
      let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
      if parts.count >= 2, let n = UInt64(parts[1]) { out[String(parts[0])] = n * 1024 }
    }
    return out
  }

  /// `key N` lines (`memory.stat`).
  private static func spaceFields(_ text: String) -> [String: UInt64] {
    var out: [String: UInt64] = [:]
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: " ")
      if parts.count == 2, let n = UInt64(parts[1]) { out[String(parts[0])] = n }
    }
    return out
  }

  /// A /proc or /sys file's text (at most 64 KiB), or nil.
  private static func readSmallFile(_ path: String) -> String? {
    KeyFileReader.readFile(path, limit: 65536).map { String(decoding: $0, as: UTF8.self) }
  }
}

extension UInt64 {
  fileprivate func subtractingClamped(_ other: UInt64) -> UInt64 { self > other ? self - other : 0 }
}
