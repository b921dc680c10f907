import BrokerBasics
import BrokerCore
import Glibc

/// One line that must not be shown or kept: a passphrase, a pasted cookie value. Read on a
/// dedicated thread (never the cooperative pool), byte by byte so nothing after the line is taken
/// from the descriptor, at most `maxBytes`; the line end (LF, or CR LF) is not part of it.
public enum SecretLine {
  /// The longest line taken; the rest of a longer one is read and dropped.
  public static let maxBytes = 16 * 1024

  /// Reads one line from `fd`. On a terminal the echo is off while reading (and restored
  /// afterwards, also when the read fails); `prompt` is shown once it is off, so nothing typed
  /// ahead is echoed either. The caller zeroes the result when done (`Sodium.zero`).
  /// - Returns: the line, or nil when `fd` ended (or failed) before any byte of it.
  /// - Throws: `SystemError.call` when no thread can be started.
  public static func read(fd: Int32, prompt: @escaping @Sendable () -> Void = {}) async throws -> [UInt8]? {
    try await DedicatedThread.run { readLine(fd: fd, prompt: prompt) }
  }

  static func readLine(fd: Int32, prompt: () -> Void) -> [UInt8]? {
    var saved = termios()
    let isTerminal = tcgetattr(fd, &saved) == 0
    if isTerminal {
      var quiet = saved
      quiet.c_lflag &= ~tcflag_t(ECHO)
      tcsetattr(fd, TCSANOW, &quiet)
    }
    defer { if isTerminal { tcsetattr(fd, TCSANOW, &saved) } }
    prompt()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(256)
    var byte: UInt8 = 0
    var any = false
    while true {
      let n = retryingOnInterrupt { Glibc.read(fd, &byte, 1) }
      guard n == 1 else { break }
      any = true
      if byte == 0x0A { break }
      if bytes.count < maxBytes { bytes.append(byte) }
    }
    byte = 0
    if bytes.last == 0x0D { bytes.removeLast() }
    return any ? bytes : nil
  }
}
