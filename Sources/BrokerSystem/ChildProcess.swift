import BrokerBasics
import BrokerCore
import BrokerWire
import CBrokerShims
import Glibc

/// How a child process ended.
public enum ChildExit: Sendable, Equatable {
  case exited(Int32)
  case signalled(Int32)

  /// The shell's convention: the exit code, or 128 + N after death by signal N.
  public var status: Int32 {
    switch self {
    case .exited(let code): return code
    case .signalled(let n): return 128 + n
    }
  }
}

/// Why a command could not be started, as env(1) reports it: 127 when it is not found, 126 when
/// it cannot be run.
public struct ChildStartError: Error, Sendable, Equatable {
  public var status: Int32
  /// `'COMMAND': No such file or directory`.
  public var message: String
}

/// A command `tokenbroker exec` runs: started with `posix_spawn` (no `fork` in a threaded
/// process) with the given environment and this process's standard streams and terminal;
/// SIGINT, SIGTERM and SIGHUP sent to tokenbroker are passed on to it (a terminal's ^C reaches
/// both processes by itself and is not sent twice). One at a time per process.
public final class ChildProcess: Sendable {
  public let pid: pid_t
  private let relay: (read: Int32, write: Int32)
  static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP]
  static let relayed: [Int32] = forwarded + [SIGCHLD]

  private init(pid: pid_t, relay: (read: Int32, write: Int32)) {
    self.pid = pid
    self.relay = relay
  }

  /// Starts `argv[0]` (searched in `path`, the child's `PATH`, when it has no `/`, as execvp
  /// does) with `argv` and `environment` (`NAME=value` entries) exactly as given, bytes.
  /// - Throws: `ChildStartError` (127 not found, 126 not runnable).
  public static func start(_ argv: [[UInt8]], environment: [[UInt8]], path: String) throws(ChildStartError) -> ChildProcess {
    let program = argv[0]
    let name = String(decoding: program, as: UTF8.self)
    var fds: [Int32] = [-1, -1]
    guard cbroker_pipe_cloexec_nonblock(&fds) == 0 else {
      throw ChildStartError(status: 126, message: "'\(name)': \(Errno.current.description)")
    }
    // Handlers before the child exists, so neither its exit nor a signal can be missed.
    _ = relayed.withUnsafeBufferPointer { cbroker_relay_signals(fds[1], $0.baseAddress, Int32($0.count)) }
    var denied: Int32?
    for candidate in candidates(program, path: path) {
      switch spawn(candidate, argv: argv, envp: environment) {
      case .success(let pid): return ChildProcess(pid: pid, relay: (fds[0], fds[1]))
      case .failure(let e) where e.code == ENOENT || e.code == ENOTDIR: continue
      case .failure(let e) where e.code == EACCES && !program.contains(UInt8(ascii: "/")):
        denied = e.code
        continue
      case .failure(let e): try fail(fds, 126, "'\(name)': \(Errno(e.code).description)")
      }
    }
    if let denied { try fail(fds, 126, "'\(name)': \(Errno(denied).description)") }
    try fail(fds, 127, "'\(name)': No such file or directory")
  }

  private static func fail(_ fds: [Int32], _ status: Int32, _ message: String) throws(ChildStartError) -> Never {
    _ = relayed.withUnsafeBufferPointer { cbroker_relay_signals(-1, $0.baseAddress, Int32($0.count)) }
    close(fds[0])
    close(fds[1])
    throw ChildStartError(status: status, message: message)
  }

  private static func candidates(_ program: [UInt8], path: String) -> [[UInt8]] {
    if program.contains(UInt8(ascii: "/")) { return [program] }
    return path.split(separator: ":", omittingEmptySubsequences: false).map {
      Array(($0.isEmpty ? "." : String($0)).utf8) + [UInt8(ascii: "/")] + program
    }
  }

  /// `executable` started with this process's streams and terminal, the relayed signals and
  /// SIGPIPE at their default action and an empty signal mask.
  private static func spawn(_ executable: [UInt8], argv: [[UInt8]], envp: [[UInt8]]) -> Result<pid_t, Spawn.Failure> {
    Spawn(defaultSignals: relayed + [SIGPIPE]).start(executable, arguments: argv, environment: envp)
  }

  /// Waits (on a thread of its own) until the child ends, passing signals on meanwhile; then
  /// restores the default signal actions.
  public func wait() async throws -> ChildExit {
    try await DedicatedThread.run { [self] in
      defer {
        _ = Self.relayed.withUnsafeBufferPointer { cbroker_relay_signals(-1, $0.baseAddress, Int32($0.count)) }
        close(relay.read)
        close(relay.write)
      }
      while true {
        var status: Int32 = 0
        let r = retryingOnInterrupt { waitpid(pid, &status, WNOHANG) }
        if r == pid {
          return status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
        }
        if r < 0 { return .exited(1) }
        var p = pollfd(fd: relay.read, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 1000)  // SIGCHLD wakes it; the timeout is a safety net
        var bytes = [UInt8](repeating: 0, count: 64)
        let n = bytes.withUnsafeMutableBytes { read(relay.read, $0.baseAddress, $0.count) }
        for b in bytes.prefix(max(0, n)) where b & 0x80 == 0 && Self.forwarded.contains(Int32(b)) {
          kill(pid, Int32(b))
        }
      }
    }
  }
}
