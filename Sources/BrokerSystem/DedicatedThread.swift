import BrokerBasics
import BrokerCore
import Glibc

/// Runs blocking system calls (`poll`, `accept`, `read` on a terminal) on a new detached POSIX
/// thread, so they never occupy a thread of Swift's cooperative pool.
public enum DedicatedThread {
  /// Runs `body` on its own thread and returns its result or rethrows its error.
  /// - Throws: what `body` throws; `SystemError.call` when no thread can be created.
  public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      do {
        try detach(for: "the sign-in") { continuation.resume(with: Result { try body() }) }
      } catch {
        continuation.resume(throwing: error)
      }
    }
  }

  /// Starts `body` on a new detached thread and returns at once.
  /// - Parameter purpose: names what the thread serves in the error ("the agent socket").
  /// - Throws: `SystemError.call` when no thread can be created (`body` then never runs).
  public static func detach(for purpose: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
    let raw = Unmanaged.passRetained(ThreadJob(body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(
      &thread, nil,
      { argument in
        guard let argument else { return nil }
        Unmanaged<ThreadJob>.fromOpaque(argument).takeRetainedValue().work()
        return nil
      }, raw)
    guard rc == 0 else {
      Unmanaged<ThreadJob>.fromOpaque(raw).release()
      throw .call(what: "start a thread for", path: purpose, reason: Errno(rc).description)
    }
    pthread_detach(thread)
  }
}

/// The work handed to a new thread (owned by the thread once started).
private final class ThreadJob: Sendable {
  let work: @Sendable () -> Void
  init(_ work: @escaping @Sendable () -> Void) { self.work = work }
}
