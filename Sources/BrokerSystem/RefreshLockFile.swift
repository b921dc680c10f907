import BrokerBasics
import BrokerCore
import BrokerWire
import Glibc

/// `RefreshLock` over `refresh-ACCOUNT.lock` files in the runtime directory (interface.md §2),
/// each held with `flock` on its own open file description: released when the body ends or the
/// process dies, and exclusive between tasks of one process as between processes. A throttling
/// provider's hold is the file `refresh-ACCOUNT.hold` beside it (`RefreshHoldFile`), so every
/// process of the user honours it, the agent's and those without one.
public struct RefreshLockFile: RefreshLock {
  let directory: String
  /// How long to wait for another holder, in seconds (a refresh is bounded by HTTP timeouts).
  let patience: Double

  /// - Parameter directory: the runtime directory, already made safe (`RuntimeDirectory.ensure`).
  public init(runtimeDirectory directory: String, patience: Double = 120) {
    self.directory = directory
    self.patience = patience
  }

  /// Polls a non-blocking `flock` (1 ms growing to 20 ms apart), so no thread ever blocks.
  /// - Throws: `SystemError.refreshInProgress` after `patience` seconds; `.call` when the file
  ///   cannot be opened or locked.
  public func withLock<T: Sendable>(account: String, _ body: () async throws -> T) async throws -> T {
    let path = LockFiles.path(directory, prefix: "refresh-", account: account)
    let fd = try LockFiles.open(path)
    defer { close(fd) }
    guard try await LockFiles.take(fd, LOCK_EX, path: path, until: MonotonicClock.seconds + patience) else {
      throw SystemError.refreshInProgress(account: account)
    }
    return try await body()
  }

  public func hold(account: String, now: Int64) -> RefreshHold? {
    RefreshHoldFile.read(LockFiles.path(directory, prefix: "refresh-", account: account, suffix: ".hold"), now: now)
  }

  public func setHold(_ hold: RefreshHold?, account: String) {
    RefreshHoldFile.write(hold, to: LockFiles.path(directory, prefix: "refresh-", account: account, suffix: ".hold"))
  }
}

/// Lock files named after an account in the runtime directory.
enum LockFiles {
  /// `DIRECTORY/PREFIXACCOUNTSUFFIX`, with every character of the account name but letters,
  /// digits and `-_.` as `_`.
  static func path(_ directory: String, prefix: String, account: String, suffix: String = ".lock") -> String {
    let safe = String(account.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" })
    return directory + "/" + prefix + safe + suffix
  }

  /// Polls a non-blocking `flock(fd, operation)` (`LOCK_EX` or `LOCK_SH`), 1 ms growing to 20 ms
  /// apart, so no thread ever blocks. - Returns: false when `deadline` (`MonotonicClock.seconds`) passed
  /// first. - Throws: `SystemError.call` when `flock` fails otherwise; `CancellationError`.
  static func take(_ fd: Int32, _ operation: Int32, path: String, until deadline: Double) async throws -> Bool {
    var pause = 1
    while true {
      switch FileLock.attempt(fd, shared: operation == LOCK_SH) {
      case .locked: return true
      case .failed(let error): throw SystemError.call(what: "lock", path: path, reason: error.description)
      case .busy:
        guard MonotonicClock.seconds < deadline else { return false }
        try await Task.sleep(for: .milliseconds(pause))
        pause = min(pause * 2, 20)
      }
    }
  }

  /// Opens (creating 0600, never through a symbolic link) a lock file. - Throws: `SystemError.call`.
  static func open(_ path: String) throws -> Int32 {
    guard let fd = try openUnlessNoDirectory(path) else {
      throw SystemError.call(what: "open the lock file", path: path, reason: Errno(ENOENT).description)
    }
    return fd
  }

  /// As `open`, but nil when the directory does not exist.
  static func openUnlessNoDirectory(_ path: String) throws -> Int32? {
    switch FileLock.open(path) {
    case .success(let fd): return fd
    case .failure(let error) where error.code == ENOENT: return nil
    case .failure(let error): throw SystemError.call(what: "open the lock file", path: path, reason: error.description)
    }
  }
}
