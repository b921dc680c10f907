import BrokerBasics
import BrokerWire
import Glibc

/// The agent's listening socket and its lock (interface.md §2, §8).
///
/// Without socket activation: the socket directory is created 0700 or checked
/// (`AgentEndpoint.prepareDirectory`), an exclusive `flock` on `<socket>.lock` makes this the one
/// agent of the socket (its pid is written there), a stale socket is removed only while holding
/// that lock, and the new one is bound with mode 0600. Under systemd (`LISTEN_PID` = our pid,
/// `LISTEN_FDS` ≥ 1) the socket is fd 3, as systemd made it (`SocketMode=0600`,
/// `DirectoryMode=0700`), and the lock is taken when it can be.
public final class AgentListener: Sendable {
  /// The listening descriptor (non-blocking, close-on-exec).
  public let fd: Int32
  public let socketPath: String
  /// True when systemd passed the socket (it is then never unlinked here).
  public let activated: Bool
  private let lockFD: Int32

  private init(fd: Int32, socketPath: String, activated: Bool, lockFD: Int32) {
    self.fd = fd
    self.socketPath = socketPath
    self.activated = activated
    self.lockFD = lockFD
  }

  /// Takes the lock and opens (or takes over) the socket of `endpoint`.
  /// - Parameters:
  ///   - environment: for `LISTEN_PID` / `LISTEN_FDS`.
  ///   - lockWait: seconds to wait for another agent's lock (one that is exiting).
  /// - Throws: `AgentSetupError.directory`, `.alreadyRunning`, `.call`.
  public static func open(endpoint: AgentEndpoint, environment: [String: String], lockWait: Double = 1)
    throws(AgentSetupError) -> AgentListener
  {
    if systemdFD(3, environment) == nil, let problem = endpoint.prepareDirectory() { throw .directory(problem) }
    return try take(endpoint.socketPath, lockPath: endpoint.lockPath, systemd: 3, environment: environment, lockWait: lockWait)
  }

  /// The agent's forwarding socket (interface.md §8), `endpoint.forwardSocketPath`, mode 0600, in
  /// the directory `open` prepared: its own `flock` (`forward.sock.lock`), so two agents whose
  /// sockets share a directory never take each other's. Under systemd with a second socket
  /// (`LISTEN_FDS` ≥ 2), fd 4, as systemd made it.
  /// - Throws: `AgentSetupError.alreadyRunning` when another agent serves it, `.call`.
  public static func openForwarding(endpoint: AgentEndpoint, environment: [String: String])
    throws(AgentSetupError) -> AgentListener
  {
    let path = endpoint.forwardSocketPath
    return try take(path, lockPath: path + ".lock", systemd: 4, environment: environment, lockWait: 0)
  }

  /// `fd` when systemd passed this process that many sockets (`LISTEN_PID`, `LISTEN_FDS`: fd 3 is
  /// the first), else nil.
  private static func systemdFD(_ fd: Int32, _ environment: [String: String]) -> Int32? {
    let mine = environment["LISTEN_PID"].flatMap { Int32($0) } == getpid()
    return mine && (environment["LISTEN_FDS"].flatMap { Int32($0) } ?? 0) >= fd - 2 ? fd : nil
  }

  /// Systemd's socket `systemd` (close-on-exec, non-blocking; its lock taken when free), or the
  /// socket bound at `path` under the lock at `lockPath`, waited for up to `lockWait` seconds.
  private static func take(
    _ path: String, lockPath: String, systemd: Int32, environment: [String: String], lockWait: Double
  ) throws(AgentSetupError) -> AgentListener {
    if let fd = systemdFD(systemd, environment) {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
      let lock = (try? takeLock(lockPath, wait: 0)) ?? -1
      return AgentListener(fd: fd, socketPath: path, activated: true, lockFD: lock)
    }
    let lock = try takeLock(lockPath, wait: lockWait)
    do {
      return AgentListener(fd: try bind(path), socketPath: path, activated: false, lockFD: lock)
    } catch {
      Glibc.close(lock)
      throw error
    }
  }

  /// Removes the socket (unless systemd owns it) while still holding the lock, then releases both.
  public func close() {
    if !activated { unlink(socketPath) }
    Glibc.close(fd)
    if lockFD >= 0 { Glibc.close(lockFD) }
  }

  /// Opens `path` and takes an exclusive `flock`, retrying for `wait` seconds; writes our pid.
  static func takeLock(_ path: String, wait: Double) throws(AgentSetupError) -> Int32 {
    let fd: Int32
    switch FileLock.open(path) {
    case .success(let opened): fd = opened
    case .failure(let error): throw .call(what: "open the lock file", path: path, reason: error.description)
    }
    let deadline = MonotonicClock.milliseconds + Int(wait * 1000)
    switch FileLock.wait(fd, maxPause: 50, keepWaiting: { MonotonicClock.milliseconds < deadline }) {
    case .locked: break
    case .busy:
      Glibc.close(fd)
      throw .alreadyRunning(socket: String(path.dropLast(".lock".count)))
    case .failed(let error):
      Glibc.close(fd)
      throw .call(what: "lock", path: path, reason: error.description)
    }
    let pid = Array("\(getpid())\n".utf8)
    _ = ftruncate(fd, 0)
    _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    return fd
  }

  /// A new listening socket at `path` (a stale one removed first), mode 0600.
  static func bind(_ path: String) throws(AgentSetupError) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw .call(what: "use the socket path", path: path, reason: "longer than 107 bytes")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { throw .call(what: "create a socket for", path: path, reason: Errno.current.description) }
    if unlink(path) != 0 && errno != ENOENT {
      let reason = Errno.current.description
      Glibc.close(fd)
      throw .call(what: "remove the stale socket", path: path, reason: reason)
    }
    // Bound with the agent's umask (077, `ProcessHardening`), then 0600. No process-wide umask
    // change here: the directory already keeps others out, and the peer check refuses them anyway.
    let rc = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.bind(fd, $0, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1))
      }
    }
    guard rc == 0, chmod(path, 0o600) == 0, listen(fd, 512) == 0 else {
      let reason = Errno.current.description
      Glibc.close(fd)
      throw .call(what: "listen on", path: path, reason: reason)
    }
    return fd
  }
}
