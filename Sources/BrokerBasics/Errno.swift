import Glibc

/// An `errno` value (errno(3)) and its text (strerror(3)): the one place a failed system call
/// becomes words in a message.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
  /// The value, such as `ENOENT`.
  public let code: Int32

  @inlinable public init(_ code: Int32) { self.code = code }

  /// The calling thread's `errno` now: read it right after the call that failed.
  @inlinable public static var current: Errno { Errno(errno) }

  /// strerror(3)'s text, such as "No such file or directory".
  public var description: String { String(cString: strerror(code)) }
}

/// Makes the system call `call` again while it fails with `EINTR` (a signal came before it did
/// anything), the retry every blocking call here needs (signal(7), "Interruption of system calls";
/// swift-system's `valueOrErrno(retryOnInterrupt:)`). Returns the call's own result; after a
/// failure (-1) `errno` is still the call's, for the caller to read (`Errno.current`, `EAGAIN`).
/// For calls that report failure as -1 with `errno` (read, write, send, recv, poll, open, flock,
/// connect, waitpid), not for those that return the error (pthread_*, posix_spawn).
@inlinable public func retryingOnInterrupt<Result: BinaryInteger>(_ call: () -> Result) -> Result {
  while true {
    let result = call()
    if result == -1 && errno == EINTR { continue }
    return result
  }
}

/// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`.
/// - Returns: nil when all were written; the `Errno` of the write that failed (`EAGAIN` on a full
///   non-blocking descriptor, `EPIPE` when the reader went away), or `EIO` when a write wrote
///   nothing.
@inlinable public func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Errno? {
  var offset = 0
  while offset < bytes.count {
    let n = retryingOnInterrupt { bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) } }
    if n < 0 { return .current }
    if n == 0 { return Errno(EIO) }
    offset += n
  }
  return nil
}
