import BrokerBasics
import BrokerCore
import Glibc

/// Reads lines typed or pasted on a terminal (the redirect URL, when the browser runs on another
/// machine) on a dedicated thread, until a line is accepted or it is stopped.
///
/// `read` polls the descriptor together with a wake pipe, so `stop()` (or cancelling the task)
/// ends it at once; end of input just waits for the stop.
public final class TerminalLines: Sendable {
  private let fd: Int32
  private let wake: WakePipe
  /// Longer lines are dropped (a redirect URL is a few hundred bytes).
  static let maxLine = 16 * 1024

  /// - Parameter fd: the descriptor to read (standard input).
  /// - Throws: `SystemError.call` when no wake pipe can be made.
  public init(fd: Int32 = 0) throws(SystemError) {
    self.fd = fd
    wake = try WakePipe()
  }

  /// Ends a running `read` (it throws `CancellationError`).
  public func stop() { wake.signal() }

  /// Calls `accept` with each line (without its line end, surrounding white space removed;
  /// empty lines skipped) until it returns a value.
  /// - Throws: `CancellationError` when stopped or the task is cancelled.
  public func read<Result: Sendable>(accept: @escaping @Sendable (String) -> Result?) async throws -> Result {
    try await withTaskCancellationHandler {
      try await DedicatedThread.run { [self] in try loop(accept) }
    } onCancel: {
      stop()
    }
  }

  private func loop<Result: Sendable>(_ accept: (String) -> Result?) throws -> Result {
    var buffer: [UInt8] = []
    var inputOpen = true
    while true {
      var fds = [pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
      if inputOpen { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
      let ready = retryingOnInterrupt { poll(&fds, nfds_t(fds.count), -1) }
      if ready < 0 || fds[0].revents != 0 { throw CancellationError() }
      guard inputOpen, fds[1].revents != 0 else { continue }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let n = retryingOnInterrupt { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
      if n < 0 && errno == EAGAIN { continue }
      if n <= 0 {
        inputOpen = false
        continue
      }
      buffer += chunk[0..<n]
      while let newline = buffer.firstIndex(of: 10) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        let trimmed = line.trimmingCharacters(in: " \t\r")
        if !trimmed.isEmpty, let result = accept(trimmed) { return result }
      }
      if buffer.count > Self.maxLine { buffer.removeAll() }
    }
  }
}

extension String {
  fileprivate func trimmingCharacters(in set: String) -> String {
    var s = Substring(self)
    while let f = s.first, set.contains(f) { s.removeFirst() }
    while let l = s.last, set.contains(l) { s.removeLast() }
    return String(s)
  }
}
