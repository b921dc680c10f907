public import BrokerStore
public import BrokerSystem
import BrokerWire
import Synchronization

/// The encrypted store's key, held by the agent alone (interface.md §7.1): from `unlock` until
/// `unlock-timeout` seconds pass, `lock`, or the agent exits. Dropping it releases the last
/// reference the agent keeps, so `StoreKey` zeroes and unlocks its memory as soon as no store call
/// in flight still uses it; `onDrop` then lets the agent forget what it cached from the store.
///
/// A drop waits for the refreshes already under way, here or in another process, to store their
/// rotated refresh tokens (`StoreKeyUseLock`, bug-cases-3.md X16): the provider has invalidated
/// the old token by then, so a reply that cannot be written signs the user out.
public final class StoreKeyHolder: Sendable {
  private struct Held {
    var key: StoreKey
    var path: String
    var generation: Int
  }
  private struct State {
    var held: Held?
    var generation = 0
    var expiry: Task<Void, Never>?
  }
  private let state = Mutex(State())
  private let keyUse: StoreKeyUseLock?
  private let log: @Sendable (String) -> Void
  private let onDrop: @Sendable () async -> Void

  /// - Parameters:
  ///   - keyUse: what refreshes hold while they need the key (nil: nothing to wait for).
  ///   - log: told when a drop waited for refreshes, or gave up waiting.
  ///   - onDrop: runs after the key was dropped by `lock` or the timeout (the agent forgets its
  ///     cached access tokens there).
  public init(
    keyUse: StoreKeyUseLock? = nil, log: @escaping @Sendable (String) -> Void = { _ in },
    onDrop: @escaping @Sendable () async -> Void = {}
  ) {
    self.keyUse = keyUse
    self.log = log
    self.onDrop = onDrop
  }

  /// The key of the store at `path`, or nil when locked (or unlocked for another file).
  public func key(for path: String) -> StoreKey? {
    state.withLock { s in s.held.flatMap { $0.path == path ? $0.key : nil } }
  }

  /// True while a key is held: the agent then does not exit for idleness.
  public var isUnlocked: Bool { state.withLock { $0.held != nil } }

  /// Keeps `key` for the store at `path` for `seconds` (0: until `drop` or the agent exits),
  /// replacing any key held before.
  public func hold(_ key: StoreKey, path: String, seconds: Int) {
    let old = state.withLock { s -> Task<Void, Never>? in
      s.generation += 1
      s.held = Held(key: key, path: path, generation: s.generation)
      defer { s.expiry = nil }
      return s.expiry
    }
    old?.cancel()
    guard seconds > 0 else { return }
    let generation = state.withLock { $0.generation }
    let task = Task { [weak self] in
      try? await Task.sleep(for: .seconds(seconds))
      guard !Task.isCancelled, let self else { return }
      await self.drop(ifGeneration: generation)
    }
    state.withLock { s in if s.generation == generation { s.expiry = task } else { task.cancel() } }
  }

  /// Forgets the key held now (`tokenbroker lock`, `agent stop`) once the refreshes under way have
  /// stored their results (at most `StoreKeyUseLock.patience` seconds); a key handed over by an
  /// `unlock` meanwhile stays. No key held is no error.
  public func drop() async {
    guard let generation = state.withLock({ $0.held?.generation }) else { return }
    await drop(ifGeneration: generation)
  }

  private func drop(ifGeneration generation: Int) async {
    func clear() -> Bool {
      state.withLock { s -> Bool in
        guard let held = s.held, held.generation == generation else { return false }
        s.held = nil
        s.expiry?.cancel()
        s.expiry = nil
        return true
      }
    }
    guard state.withLock({ $0.held?.generation == generation }) else { return }
    guard let keyUse else {
      if clear() { await onDrop() }
      return
    }
    let started = MonotonicClock.milliseconds
    let (dropped, drained) = await keyUse.exclusively(clear)
    guard dropped else { return }
    let waited = MonotonicClock.milliseconds - started
    if !drained {
      log("dropped the store key after waiting \(waited) ms for a refresh that is still running; its rotated token cannot be stored")
    } else if waited > 100 {
      log("dropped the store key once the refreshes under way had stored their tokens (\(waited) ms)")
    }
    await onDrop()
  }
}
