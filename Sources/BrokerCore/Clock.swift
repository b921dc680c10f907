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
  /// Unix seconds rounded up: `expires_in = expiresOn - nowRoundedUp` never tells a caller more
  /// time than is left (bug-cases-3.md X12).
  public var nowRoundedUp: Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) + (ts.tv_nsec > 0 ? 1 : 0)
  }
  public func sleep(seconds: Double) async throws {
    try await Task.sleep(for: .milliseconds(Int64(max(0, seconds) * 1000)))
  }
}
