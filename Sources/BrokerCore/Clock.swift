#if canImport(Glibc)
  import Glibc
#endif

/// Wall-clock time in Unix seconds, and sleeping; injected so tests control time.
public protocol TimeSource: Sendable {
  /// Seconds since the Unix epoch (UTC).
  var now: Int64 { get }
  /// Suspends for `seconds` (fractions allowed). Throws `CancellationError` when cancelled.
  func sleep(seconds: Double) async throws
}

/// The real clock: `clock_gettime(CLOCK_REALTIME)` and `Task.sleep`.
public struct SystemTime: TimeSource {
  public init() {}
  public var now: Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec)
  }
  public func sleep(seconds: Double) async throws {
    try await Task.sleep(for: .milliseconds(Int64(max(0, seconds) * 1000)))
  }
}
