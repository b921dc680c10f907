import Glibc

/// Starts `tokenbroker-core agent run` detached (`Spawn.detached`: a new session, standard streams
/// on `/dev/null`, no other inherited descriptor: a caller's pipe must not stay open in the
/// agent, default signal actions), with the caller's environment minus systemd's socket-activation variables.
public enum AgentLauncher {
  /// Spawns `executable` with `arguments` (argv[0] included).
  /// - Returns: the child's pid, or nil when it could not be started (errno is set).
  public static func spawn(executable: String, arguments: [String]) -> pid_t? {
    switch Spawn.detached.start(executable, arguments: arguments, environment: childEnvironment()) {
    case .success(let pid): return pid
    case .failure(let failure):
      errno = failure.code
      return nil
    }
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
}
