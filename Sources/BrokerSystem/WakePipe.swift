import BrokerBasics
import BrokerCore
import CBrokerShims
import Glibc
import Synchronization

/// A self-pipe that wakes a `poll` loop on another thread (`stop()`), closed exactly once.
///
/// The close and every write happen under one lock, so a late `stop()` never writes to a closed
/// (and possibly reused) descriptor.
final class WakePipe: Sendable {
  /// The end the loop polls for `POLLIN`.
  let readEnd: Int32
  private let writeEnd: Int32
  private let open: Mutex<Bool>

  /// - Parameter purpose: names what the pipe serves in the error ("the agent socket").
  /// - Throws: `SystemError.call` when `pipe2` fails.
  init(for purpose: String = "the sign-in") throws(SystemError) {
    var fds: [Int32] = [-1, -1]
    guard cbroker_pipe_cloexec_nonblock(&fds) == 0 else {
      throw SystemError.call(what: "create a pipe for", path: purpose, reason: Errno.current.description)
    }
    readEnd = fds[0]
    writeEnd = fds[1]
    open = Mutex(true)
  }

  /// Wakes the loop; does nothing once closed.
  func signal() {
    open.withLock { isOpen in
      guard isOpen else { return }
      var byte: UInt8 = 1
      _ = write(writeEnd, &byte, 1)
    }
  }

  /// True once `signal()` was called (reads without consuming).
  var signalled: Bool {
    var p = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
    return poll(&p, 1, 0) > 0
  }

  /// Closes both ends; later `signal()` calls do nothing.
  func close() {
    open.withLock { isOpen in
      guard isOpen else { return }
      isOpen = false
      _ = Glibc.close(readEnd)
      _ = Glibc.close(writeEnd)
    }
  }

  deinit { close() }
}
