import BrokerCore
import Glibc

/// Runs blocking system calls (`poll`, `accept`, `read` on a terminal) on a new detached POSIX
/// thread, so they never occupy a thread of Swift's cooperative pool, and hands the result back
/// through a continuation.
public enum DedicatedThread {
  /// Runs `body` on its own thread and returns its result or rethrows its error.
  /// - Throws: what `body` throws; `SystemError.call` when no thread can be created.
  public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      let job = ThreadJob { continuation.resume(with: Result { try body() }) }
      let raw = Unmanaged.passRetained(job).toOpaque()
      var thread = pthread_t()
      let rc = pthread_create(
        &thread, nil,
        { argument in
          guard let argument else { return nil }
          Unmanaged<ThreadJob>.fromOpaque(argument).takeRetainedValue().work()
          return nil
        }, raw)
      if rc == 0 {
        pthread_detach(thread)
      } else {
        Unmanaged<ThreadJob>.fromOpaque(raw).release()
        continuation.resume(
          throwing: SystemError.call(what: "start a thread for", path: "the sign-in", reason: String(cString: strerror(rc))))
      }
    }
  }
}

/// The work handed to a new thread (owned by the thread once started).
private final class ThreadJob: Sendable {
  let work: @Sendable () -> Void
  init(_ work: @escaping @Sendable () -> Void) { self.work = work }
}
