import Testing

@testable import BrokerStore

/// bug-cases-3.md X15: the room Argon2id has, from rlimits, memory cgroups (v1 and v2, this one
/// and those above) and the machine, on fixed file contents.
@Suite("MemoryRoom")
struct MemoryRoomTests {
  static let mib: UInt64 = 1 << 20

  func room(as addressSpace: UInt64? = nil, data: UInt64? = nil, _ files: [String: String]) -> MemoryRoom {
    MemoryRoom.measure(addressSpace: addressSpace, data: data, read: { files[$0] })
  }

  let status = "Name:\ttokenbroker-cor\nVmSize:\t  330184 kB\nVmData:\t   36368 kB\n"

  @Test func nothingReadableIsNoLimit() {
    #expect(room([:]) == .unlimited)
    #expect(MemoryRoom.unlimited.description == "")
  }

  @Test func rlimitsLessWhatIsMappedAlready() {
    let limited = room(as: 330184 * 1024 + 160 * Self.mib, ["/proc/self/status": status])
    #expect(limited == MemoryRoom(bytes: 160 * Self.mib, limit: "RLIMIT_AS (ulimit -v)"))
    #expect(limited.description == "RLIMIT_AS (ulimit -v) leaves about 160 MiB")
    let data = room(as: 1 << 40, data: 36368 * 1024 + 100 * Self.mib, ["/proc/self/status": status])
    #expect(data == MemoryRoom(bytes: 100 * Self.mib, limit: "RLIMIT_DATA (ulimit -d)"))
    #expect(room(as: 1000, ["/proc/self/status": status]).bytes == 0)  // over the limit already
  }

  @Test func cgroupV2ChecksThisCgroupAndThoseAbove() {
    let files = [
      "/proc/self/cgroup": "0::/user.slice/app.scope\n",
      "/sys/fs/cgroup/user.slice/app.scope/memory.max": "max\n",
      "/sys/fs/cgroup/user.slice/app.scope/memory.current": "1000\n",
      "/sys/fs/cgroup/user.slice/memory.max": "\(256 * Self.mib)\n",
      "/sys/fs/cgroup/user.slice/memory.current": "\(100 * Self.mib)\n",
      "/sys/fs/cgroup/user.slice/memory.stat": "anon 1\nfile 99\nactive_file \(4 * Self.mib)\ninactive_file \(16 * Self.mib)\n",
    ]
    #expect(room(files) == MemoryRoom(bytes: 176 * Self.mib, limit: "the cgroup's memory.max (/sys/fs/cgroup/user.slice)"))
  }

  @Test func cgroupV1MemoryController() {
    let files = [
      "/proc/self/cgroup": "9:name=systemd:/\n4:memory:/docker/abc\n1:cpu:/\n0::/\n",
      "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "\(160 * Self.mib)\n",
      "/sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes": "\(40 * Self.mib)\n",
      "/sys/fs/cgroup/memory/docker/abc/memory.stat":
        "cache 5\ninactive_file 1\ntotal_active_file \(2 * Self.mib)\ntotal_inactive_file \(6 * Self.mib)\n",
      "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",  // unlimited
      "/sys/fs/cgroup/memory/memory.usage_in_bytes": "\(3000 * Self.mib)\n",
    ]
    #expect(room(files) == MemoryRoom(bytes: 128 * Self.mib, limit: "the cgroup's memory.limit_in_bytes (/sys/fs/cgroup/memory/docker/abc)"))
  }

  @Test func theTightestLimitWins() {
    let files = [
      "/proc/self/status": status,
      "/proc/meminfo": "MemTotal: 1000 kB\nMemAvailable:  51200 kB\nSwapFree:  10240 kB\n",
    ]
    #expect(room(files) == MemoryRoom(bytes: 60 * Self.mib, limit: "the machine's free memory (MemAvailable)"))
    #expect(room(as: 330184 * 1024 + 10 * Self.mib, files).limit == "RLIMIT_AS (ulimit -v)")
  }

  @Test func thisProcessHasSomeRoom() {
    let now = MemoryRoom.current()
    #expect(now.bytes.map { $0 > 64 * Self.mib } ?? true, "\(now)")
  }
}
