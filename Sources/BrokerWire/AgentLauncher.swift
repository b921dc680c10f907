import Glibc

/// Starts `tokenbroker-core agent run` detached, without `fork()` (a Swift process has threads):
/// `posix_spawn` in a new session (`POSIX_SPAWN_SETSID`), standard streams on `/dev/null`, every
/// other inherited descriptor closed (a caller's pipe must not stay open in the agent), and the
/// caller's environment minus systemd's socket-activation variables.
public enum AgentLauncher {
  /// glibc's `POSIX_SPAWN_SETSID` (spawn.h, glibc ≥ 2.26), for every `posix_spawn` that starts a
  /// new session. Spelled here because Swift's Glibc module hides GNU flags and the front imports no
  /// C module; AgentLauncherTests checks it against spawn.h (through CBrokerShims).
  public static let setsidFlag: Int16 = 0x80

  /// Spawns `executable` with `arguments` (argv[0] included).
  /// - Returns: the child's pid, or nil when it could not be started (errno is set).
  public static func spawn(executable: String, arguments: [String]) -> pid_t? {
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawnattr_init(&attributes)
    defer {
      posix_spawn_file_actions_destroy(&actions)
      posix_spawnattr_destroy(&attributes)
    }
    for target in Int32(0)...2 {
      posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    for fd in openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
    posix_spawnattr_setflags(&attributes, setsidFlag)

    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
    argv.append(nil)
    var envp: [UnsafeMutablePointer<CChar>?] = childEnvironment().map { strdup($0) }
    envp.append(nil)
    defer {
      for p in argv { free(p) }
      for p in envp { free(p) }
    }
    var pid = pid_t()
    let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    if rc != 0 {
      errno = rc
      return nil
    }
    return pid
  }

  /// The current environment without `LISTEN_PID`, `LISTEN_FDS`, `LISTEN_FDNAMES` (those belong to
  /// this process, never to the agent it starts).
  static func childEnvironment() -> [String] {
    var out: [String] = []
    var p = environ
    while let entry = p.pointee {
      let s = String(cString: entry)
      if !s.hasPrefix("LISTEN_PID=") && !s.hasPrefix("LISTEN_FDS=") && !s.hasPrefix("LISTEN_FDNAMES=") { out.append(s) }
      p += 1
    }
    return out
  }

  /// The descriptors open in this process (from `/proc/self/fd`), without the one used to list them.
  static func openDescriptors() -> [Int32] {
    guard let dir = opendir("/proc/self/fd") else { return [] }
    let own = dirfd(dir)
    var fds: [Int32] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if let fd = Int32(name), fd != own { fds.append(fd) }
    }
    closedir(dir)
    return fds
  }
}
