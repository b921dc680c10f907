import BrokerBasics
import BrokerWire
import Glibc

/// Standard input as read by the front, and handing it on to tokenbroker-core when the agent
/// cannot serve the call (exec keeps fd 0 but not what this process already read from it).
struct StandardInput {
  /// The most the front reads for the agent, in bytes: below the agent's 64 KiB message cap and
  /// below a pipe's default capacity (64 KiB), so `replay()` never blocks on what was read.
  static let limit = 60 * 1024

  private(set) var bytes: [UInt8] = []
  /// True once `read()` ran (fd 0 then no longer holds what is in `bytes`).
  private(set) var started = false
  /// True when `bytes` is all of standard input (end of input reached within `limit`).
  private(set) var complete = true

  /// Reads standard input to its end, or until more than `limit` bytes came.
  mutating func read() {
    started = true
    complete = false
    // A stack buffer, not a zeroed array (zeroing would fault in all its pages on every call).
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16384) { chunk in
      while bytes.count <= Self.limit {
        // Never past `limit + 1` bytes, however the input arrives (short reads from a pipe).
        let want = min(chunk.count, Self.limit + 1 - bytes.count)
        let n = retryingOnInterrupt { Glibc.read(0, chunk.baseAddress, want) }
        if n <= 0 {
          complete = true
          return
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[0..<n]))
      }
    }
  }

  /// Makes fd 0 yield exactly what standard input held: the bytes read so far through a pipe,
  /// followed (when the input went on past `limit`) by the rest of the original input, copied by
  /// `cat` (spawned, not forked).
  /// - Returns: nil on success, else what failed (fd 0 is then unchanged).
  func replay() -> String? {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return "cannot create a pipe (\(Errno.current.description))" }
    let (readEnd, writeEnd) = (fds[0], fds[1])
    _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
    if writeAll(writeEnd, bytes) != nil {
      close(readEnd)
      close(writeEnd)
      return "cannot hand standard input on to tokenbroker-core (the pipe is full)"
    }
    if !complete, let problem = copyRest(into: writeEnd) {
      close(readEnd)
      close(writeEnd)
      return problem
    }
    close(writeEnd)
    guard dup2(readEnd, 0) == 0 else { return "cannot hand standard input on (\(Errno.current.description))" }
    close(readEnd)
    return nil
  }

  /// Spawns `cat` copying the unread rest of fd 0 to `pipe`'s write end. `cat` holds nothing
  /// else (not the pipe's read end, not our stderr), so it ends at the end of input, or at the
  /// first write once tokenbroker-core stopped reading (SIGPIPE).
  private func copyRest(into pipe: Int32) -> String? {
    _ = fcntl(pipe, F_SETFL, fcntl(pipe, F_GETFL) & ~O_NONBLOCK)
    let cat = access("/bin/cat", X_OK) == 0 ? "/bin/cat" : "/usr/bin/cat"
    let copier = Spawn(stdout: .descriptor(pipe), stderr: .null, closesOthers: true)
    if case .failure(let failure) = copier.start(cat, arguments: ["cat"], environment: nil) {
      return "cannot start \(cat) to hand on standard input (\(Errno(failure.code).description))"
    }
    return nil
  }
}
