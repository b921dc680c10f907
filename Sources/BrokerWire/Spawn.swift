import BrokerBasics
import Glibc

/// How every child process of tokenbroker is started: `posix_spawn` (never `fork()`: a Swift
/// process has threads), with its standard streams, descriptors, session and signals as
/// described here. Glibc only, so the front uses it too.
///
/// A detached child (the agent, a browser) gets `/dev/null` streams, `closesOthers` and
/// `newSession`, and is never waited for; a child that is waited for (git, `exec`'s command)
/// is reaped with `Spawn.wait`.
public struct Spawn: Sendable {
  /// What one of the child's standard streams is.
  public enum Stream: Sendable, Equatable {
    /// This process's descriptor, as it is.
    case inherited
    /// `/dev/null` (read-only for stdin, write-only for stdout and stderr).
    case null
    /// This descriptor of ours, duplicated onto the stream (its close-on-exec flag cleared there).
    case descriptor(Int32)
  }

  /// Why a child could not be started: `posix_spawn`'s errno value (ENOENT, EACCES, ...).
  public struct Failure: Error, Sendable, Equatable {
    public var code: Int32
    public init(code: Int32) { self.code = code }
  }

  /// glibc's `POSIX_SPAWN_SETSID` (spawn.h, glibc ≥ 2.26). Spelled here because Swift's Glibc
  /// module hides GNU flags and the front imports no C module; SpawnTests checks it against
  /// spawn.h (through CBrokerShims).
  public static let setsidFlag: Int16 = 0x80

  public var stdin: Stream
  public var stdout: Stream
  public var stderr: Stream
  /// Closes every other descriptor the child would inherit (those without close-on-exec).
  public var closesOthers: Bool
  /// Starts the child in a new session (`POSIX_SPAWN_SETSID`): no controlling terminal, no
  /// terminal signals.
  public var newSession: Bool
  /// Signals whose action is reset to the default in the child, whose signal mask is emptied
  /// too; nil leaves both as this process has them (ignored signals stay ignored).
  public var defaultSignals: [Int32]?
  /// Searches this process's `PATH` for an executable without a `/` (`posix_spawnp`).
  public var searchesPath: Bool

  public init(
    stdin: Stream = .inherited, stdout: Stream = .inherited, stderr: Stream = .inherited, closesOthers: Bool = false,
    newSession: Bool = false, defaultSignals: [Int32]? = nil, searchesPath: Bool = false
  ) {
    (self.stdin, self.stdout, self.stderr) = (stdin, stdout, stderr)
    (self.closesOthers, self.newSession, self.defaultSignals, self.searchesPath) =
      (closesOthers, newSession, defaultSignals, searchesPath)
  }

  /// A detached child: `/dev/null` streams, nothing else of ours, its own session, an empty
  /// signal mask and the default action for the signals a caller may have ignored or caught
  /// (SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD: `nohup`, a shell's background job).
  public static var detached: Spawn {
    Spawn(
      stdin: .null, stdout: .null, stderr: .null, closesOthers: true, newSession: true,
      defaultSignals: [SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD])
  }

  /// Starts `executable` with `arguments` (argv[0] included) and `environment` (`NAME=value`
  /// entries, bytes; nil: this process's environment).
  /// - Returns: the child's pid, or `Failure` with posix_spawn's errno.
  public func start(_ executable: [UInt8], arguments: [[UInt8]], environment: [[UInt8]]?) -> Result<pid_t, Failure> {
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawnattr_init(&attributes)
    defer {
      posix_spawn_file_actions_destroy(&actions)
      posix_spawnattr_destroy(&attributes)
    }
    for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
      switch stream {
      case .inherited: break
      case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
      case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, target)
      }
    }
    // After the dup2s: a descriptor duplicated onto a stream is closed under its own number.
    if closesOthers { for fd in Self.openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) } }
    var flags: Int16 = newSession ? Self.setsidFlag : 0
    if let defaultSignals {
      var defaults = sigset_t()
      var none = sigset_t()
      sigemptyset(&defaults)
      sigemptyset(&none)
      for signal in defaultSignals { sigaddset(&defaults, signal) }
      posix_spawnattr_setsigdefault(&attributes, &defaults)
      posix_spawnattr_setsigmask(&attributes, &none)
      flags |= Int16(POSIX_SPAWN_SETSIGDEF) | Int16(POSIX_SPAWN_SETSIGMASK)
    }
    posix_spawnattr_setflags(&attributes, flags)

    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map(Self.cString) + [nil]
    let owned: [UnsafeMutablePointer<CChar>?] = environment?.map(Self.cString) ?? []
    let envp = environment == nil ? Self.currentEnvironment() : owned + [nil]
    let file = Self.cString(executable)
    defer {
      for p in argv + owned { p?.deallocate() }
      file.deallocate()
    }
    var pid = pid_t()
    let rc =
      searchesPath
      ? posix_spawnp(&pid, file, &actions, &attributes, argv, envp)
      : posix_spawn(&pid, file, &actions, &attributes, argv, envp)
    return rc == 0 ? .success(pid) : .failure(Failure(code: rc))
  }

  /// `start` with strings.
  public func start(_ executable: String, arguments: [String], environment: [String]?) -> Result<pid_t, Failure> {
    start(Array(executable.utf8), arguments: arguments.map { Array($0.utf8) }, environment: environment?.map { Array($0.utf8) })
  }

  /// Waits for the child `pid` to end (retrying on EINTR).
  /// - Returns: the shell's convention: its exit code, or 128 + N after death by signal N; nil
  ///   when `pid` is no child of ours.
  public static func wait(_ pid: pid_t) -> Int32? {
    var status: Int32 = 0
    if retryingOnInterrupt({ waitpid(pid, &status, 0) }) < 0 { return nil }
    return exitCode(status)
  }

  /// The shell's convention for a `waitpid` status: the exit code, or 128 + N after signal N.
  public static func exitCode(_ status: Int32) -> Int32 {
    status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
  }

  /// A NUL-terminated copy of `bytes` (deallocated by the caller).
  static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar> {
    let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
    bytes.withUnsafeBytes { raw in
      if let base = raw.baseAddress { UnsafeMutableRawPointer(p).copyMemory(from: base, byteCount: raw.count) }
    }
    p[bytes.count] = 0
    return p
  }

  /// This process's environment as `environ` holds it (not copied), NUL-terminated.
  static func currentEnvironment() -> [UnsafeMutablePointer<CChar>?] {
    var entries: [UnsafeMutablePointer<CChar>?] = []
    var p = environ
    while let entry = p.pointee {
      entries.append(entry)
      p += 1
    }
    return entries + [nil]
  }

  /// The descriptors open in this process (from `/proc/self/fd`), without the one used to list
  /// them; empty when `/proc` cannot be read.
  package static func openDescriptors() -> [Int32] {
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
