internal import CLibsecret
internal import Dispatch

/// A `GCancellable` that a timer cancels `seconds` after creation: every libsecret call of one
/// store operation takes it, so the whole operation (D-Bus activation, session, search, secrets,
/// prompts) ends within the bound even when the Secret Service never replies.
///
/// `@unchecked Sendable`: the cancellable pointer is only read after init, and
/// `g_cancellable_cancel` / `g_cancellable_is_cancelled` are thread-safe (GIO documentation).
final class Deadline: @unchecked Sendable {
  /// The bound, in whole seconds (reported by `StoreError.timedOut`).
  let seconds: Int
  let cancellable: UnsafeMutablePointer<GCancellable>
  private let timer: DispatchSourceTimer
  private static let timerQueue = DispatchQueue(label: "tokenbroker.store.deadline")

  /// Starts the timer. `milliseconds` overrides the bound for tests (`seconds` is then rounded up).
  init(milliseconds: Int) {
    seconds = max(1, (milliseconds + 999) / 1000)
    cancellable = g_cancellable_new()
    timer = DispatchSource.makeTimerSource(queue: Deadline.timerQueue)
    timer.schedule(deadline: .now() + .milliseconds(milliseconds))
    timer.setEventHandler { [weak self] in self?.expire() }
    timer.resume()
  }

  deinit {
    timer.cancel()
    g_object_unref(cancellable)
  }

  /// True once the timer has fired.
  var expired: Bool { g_cancellable_is_cancelled(cancellable) != 0 }

  /// Stops the timer once the operation has finished.
  func finish() { timer.cancel() }

  private func expire() { g_cancellable_cancel(cancellable) }
}
