internal import Dispatch

/// Runs blocking calls (libsecret `*_sync`, file I/O, `flock`) on a dedicated serial queue and
/// bridges the result back with a continuation, so they never occupy a thread of Swift's
/// cooperative pool (code-models.md §9.9).
enum BlockingQueue {
  /// Runs `body` on `queue` and returns its result or rethrows its error.
  static func run<T: Sendable>(
    on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T
  ) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      queue.async { continuation.resume(with: Result { try body() }) }
    }
  }
}
