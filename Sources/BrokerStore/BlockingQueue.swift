internal import Dispatch
internal import Synchronization

/// Runs blocking calls (libsecret `*_sync`, file I/O, `flock`) on a dedicated serial queue and
/// bridges the result back with a continuation, so they never occupy a thread of Swift's
/// cooperative pool (architecture.md, "Concurrency").
enum BlockingQueue {
  /// Runs `body` on `queue` and returns its result or rethrows its error.
  ///
  /// With `timeout` (seconds), the caller gets `timeoutError` once that time has passed even if
  /// `body` is still blocked (its result is then dropped; `body` keeps the queue until it returns).
  /// This is the last resort behind the `GCancellable` bound, for a libsecret call that ignores
  /// cancellation (a prompt whose `Completed` signal never comes, or comes malformed).
  static func run<T: Sendable>(
    on queue: DispatchQueue, timeout: Double? = nil, timeoutError: any Error = CancellationError(),
    _ body: @escaping @Sendable () throws -> T
  ) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      let once = ResumeOnce(continuation)
      queue.async { once.resume(with: Result { try body() }) }
      if let timeout {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeout * 1000))) {
          once.resume(with: .failure(timeoutError))
        }
      }
    }
  }
}

/// A continuation that the first of several resumers resumes; later ones are ignored.
private final class ResumeOnce<T: Sendable>: Sendable {
  private let continuation: Mutex<CheckedContinuation<T, any Error>?>

  init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = Mutex(continuation) }

  func resume(with result: Result<T, any Error>) {
    continuation.withLock { slot in
      slot?.resume(with: result)
      slot = nil
    }
  }
}
