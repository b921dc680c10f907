import Glibc

/// The one monotonic clock of every target (`CLOCK_MONOTONIC`): deadlines, poll bounds and
/// durations that wall-clock changes cannot move. In Wire, so the front, which links no
/// concurrency runtime (`ContinuousClock` lives there), reads the same clock as the rest.
public enum MonotonicClock {
  /// Milliseconds since an arbitrary start.
  public static var milliseconds: Int {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
  }

  /// Seconds since the same start as `milliseconds`, to the nanosecond.
  public static var seconds: Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
  }
}
