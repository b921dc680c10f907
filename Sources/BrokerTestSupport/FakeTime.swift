import BrokerCore
import Synchronization

/// A manual clock: `sleep` returns at once and moves `now` forward, and every sleep is recorded,
/// so tests of polling and retries take no real time.
public final class FakeTime: TimeSource, Sendable {
  private struct State {
    var now: Double
    var sleeps: [Double] = []
  }
  private let state: Mutex<State>

  /// - Parameter now: Unix seconds to start at.
  public init(now: Int64 = 1_700_000_000) { state = Mutex(State(now: Double(now))) }

  /// Unix seconds (the fractional part of sleeps is kept internally).
  public var now: Int64 { state.withLock { Int64($0.now.rounded(.down)) } }

  /// Every `sleep(seconds:)` so far, in order, in seconds.
  public var sleeps: [Double] { state.withLock { $0.sleeps } }

  /// Moves the clock forward by `seconds` without recording a sleep.
  public func advance(by seconds: Double) { state.withLock { $0.now += max(0, seconds) } }

  /// Sets the clock to `now` (Unix seconds).
  public func set(_ now: Int64) { state.withLock { $0.now = Double(now) } }

  /// Records the sleep and advances the clock. - Throws: `CancellationError` when cancelled.
  public func sleep(seconds: Double) async throws {
    try Task.checkCancellation()
    state.withLock {
      $0.sleeps.append(seconds)
      $0.now += max(0, seconds)
    }
  }
}
