import BrokerBasics
import BrokerCore
import BrokerWire
import Glibc

/// Errors of the local system layer (runtime directory, locks). Exit 1 unless mapped otherwise.
public enum SystemError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The runtime directory exists with another owner or with group/other permission bits.
  case unsafeDirectory(path: String, problem: String)
  /// A system call failed: what was attempted, on which path, and `strerror`.
  case call(what: String, path: String, reason: String)
  /// Another `login` of this account holds the lock (exit 7).
  case loginInProgress(account: String)
  /// Another process has held the refresh lock of this account for longer than a refresh takes.
  case refreshInProgress(account: String)
  /// The loopback redirect listener cannot be set up: what failed (with `strerror`) and what to do.
  case listener(what: String, remedy: String)
  /// The fixed `redirect-port` is held by another program on one loopback address (exit 6): a
  /// browser sent to `localhost` might deliver the authorization code there.
  case redirectPortTaken(port: Int, address: String)

  public var description: String {
    switch self {
    case .unsafeDirectory(let path, let problem):
      return "refusing to use '\(path)' (\(problem)); remove it or run: chmod 0700 '\(path)'"
    case .call(let what, let path, let reason): return "cannot \(what) '\(path)' (\(reason)); check its permissions"
    case .loginInProgress(let account):
      return "a login for '\(account)' is in progress; finish it, or wait for it to end, then try again"
    case .refreshInProgress(let account):
      return "another process has been refreshing '\(account)' for minutes; try again, or end that process"
    case .listener(let what, let remedy): return "\(what); \(remedy)"
    case .redirectPortTaken(let port, let address):
      return "port \(port) (redirect-port) is in use on \(address), so the sign-in redirect could reach another "
        + "program; no browser was opened; free port \(port) or choose another redirect-port for the account "
        + "(or remove it for a random port)"
    }
  }
}

/// The per-user runtime directory (interface.md §2): created 0700, refused when it has another
/// owner or wider permissions (`PrivateDirectory`, the check the agent's socket directory has).
public enum RuntimeDirectory {
  /// Creates `path` (mode 0700) or checks it.
  /// - Throws: `SystemError.unsafeDirectory` or `.call`.
  public static func ensure(_ path: String) throws {
    switch PrivateDirectory.check(path, create: true, exclusive: true) {
    case nil: return
    case let problem? where problem.isUnsafe: throw SystemError.unsafeDirectory(path: path, problem: problem.description)
    case .cannotCreate(let code)?:
      throw SystemError.call(what: "create the directory", path: path, reason: Errno(code).description)
    case let problem?: throw SystemError.call(what: "inspect", path: path, reason: problem.description)
    }
  }
}

/// An exclusive lock on `login-ACCOUNT.lock` in the runtime directory, held by an open file
/// descriptor with `flock`: released when this object is dropped or the process dies, so an
/// abandoned login never blocks the next one (bug-cases.md B07).
public final class LoginLock: Sendable {
  private let fd: Int32

  /// Takes the lock without waiting.
  /// - Throws: `SystemError.loginInProgress` when another process holds it; `.call` or
  ///   `.unsafeDirectory` when the runtime directory cannot be used.
  public init(runtimeDirectory: String, account: String) throws {
    try RuntimeDirectory.ensure(runtimeDirectory)
    let path = LockFiles.path(runtimeDirectory, prefix: "login-", account: account)
    let fd = try LockFiles.open(path)
    switch FileLock.attempt(fd) {
    case .locked: break
    case .busy:
      close(fd)
      throw SystemError.loginInProgress(account: account)
    case .failed(let error):
      close(fd)
      throw SystemError.call(what: "lock", path: path, reason: error.description)
    }
    self.fd = fd
  }

  deinit { close(fd) }
}
