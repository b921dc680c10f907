import BrokerCore
import Synchronization

/// A key of a `SingleFlightCache`: what one value is kept under. `account` is what `drop` and
/// `oneFetchPerAccount` go by.
public protocol AccountScopedKey: Hashable, Sendable {
  var account: String { get }
}

/// Values kept in memory per key, each obtained by one fetch that every caller of that key
/// shares: the agent's access tokens (`TokenCache`) and container registry tokens
/// (`RegistryTokenCache`) are both this.
///
/// - A kept value is served while it was obtained under the account's current configuration and
///   `now <= expiry(value) - needed(value)` (Unix seconds; `needed` is the caller's margin).
/// - Otherwise one fetch per key runs; every caller of that key arriving meanwhile, forced ones
///   included, awaits it and gets its value or its error. A failed fetch keeps nothing.
/// - With `oneFetchPerAccount`, fetches of one account run one after the other (two scope sets
///   never redeem the same refresh token at once).
/// - A value is kept only when `expiry` gives a time after now (nil: never kept).
/// - `drop(account:)` forgets the account's values at once; a fetch running then keeps nothing
///   and no later caller joins it (its callers still get its answer: they asked before the drop).
/// - `onChange` runs under the cache's lock after every change of what is kept, so whoever reads
///   its own revision before `cached` never pairs a value with a revision older than the value.
public final class SingleFlightCache<Key: AccountScopedKey, Value: Sendable>: Sendable {
  private struct Entry {
    var value: Value
    var account: AccountConfig
    var expiry: Int64
  }
  private struct Flight {
    var id: Int
    var task: Task<Value, any Error>
  }
  private struct State {
    var entries: [Key: Entry] = [:]
    var flights: [Key: Flight] = [:]
    /// Bumped by `drop`: a fetch started under an older generation keeps nothing.
    var generations: [String: Int] = [:]
    /// The last fetch of each account, which the next one of that account waits for.
    var lastFetch: [String: Task<Void, Never>] = [:]
    var nextID = 0
    /// Callers awaiting a fetch now.
    var waiting = 0
  }
  private let state = Mutex(State())
  private let time: any TimeSource
  private let expiry: @Sendable (Value) -> Int64?
  private let oneFetchPerAccount: Bool
  private let onChange: @Sendable () -> Void

  /// Past this many kept values, the expired ones are forgotten (many `--scope` sets over a long life).
  static var bound: Int { 64 }

  /// - Parameters:
  ///   - time: the clock expiries are compared with (Unix seconds).
  ///   - oneFetchPerAccount: run the fetches of one account one after the other.
  ///   - expiry: the last Unix second at which a value may be handed out with no margin; nil: never kept.
  ///   - onChange: told, under the lock, after every change of what is kept.
  public init(
    time: any TimeSource, oneFetchPerAccount: Bool = false, expiry: @escaping @Sendable (Value) -> Int64?,
    onChange: @escaping @Sendable () -> Void = {}
  ) {
    self.time = time
    self.oneFetchPerAccount = oneFetchPerAccount
    self.expiry = expiry
    self.onChange = onChange
  }

  /// The value kept for `key` when it was obtained under `account`'s current configuration and
  /// is still valid for `needed` seconds, with the last Unix second memory serves it (its expiry
  /// less `needed`); nil otherwise, and nothing is started.
  public func cached(
    _ key: Key, account: AccountConfig, needed: (Value) -> Int64 = { _ in 0 }
  ) -> (value: Value, servedUntil: Int64)? {
    let now = time.now
    return state.withLock { s in Self.servable(s.entries[key], account: account, needed: needed, now: now) }
  }

  /// The kept value for `key` (unless `forceRefresh`), else the result of the running fetch for
  /// it, else of a new one.
  /// - Parameters:
  ///   - needed: seconds a kept value must stay valid to be served from memory.
  ///   - forceRefresh: skip memory (a running fetch is still shared).
  ///   - fetch: obtains a value; its argument is `forceRefresh` of the caller that started it.
  /// - Throws: what `fetch` throws, to every caller sharing it.
  public func value(
    for key: Key, account: AccountConfig, needed: (Value) -> Int64 = { _ in 0 }, forceRefresh: Bool = false,
    fetch: @escaping @Sendable (_ forceRefresh: Bool) async throws -> Value
  ) async throws -> Value {
    let now = time.now
    let found = state.withLock { s -> (kept: Value?, flight: Task<Value, any Error>?) in
      if !forceRefresh, let hit = Self.servable(s.entries[key], account: account, needed: needed, now: now) {
        return (hit.value, nil)
      }
      s.waiting += 1
      return (nil, s.flights[key]?.task ?? start(&s, key, account: account, forceRefresh: forceRefresh, fetch: fetch))
    }
    if let kept = found.kept { return kept }
    defer { state.withLock { $0.waiting -= 1 } }
    return try await found.flight!.value
  }

  /// Forgets every kept value of `account` (of every account when nil); a fetch running now keeps
  /// nothing when it ends.
  public func drop(account: String?) {
    state.withLock { s in
      let names = account.map { [$0] } ?? Array(Set(s.entries.keys.map(\.account)).union(s.flights.keys.map(\.account)))
      for name in names { s.generations[name, default: 0] += 1 }
      s.entries = s.entries.filter { key, _ in account != nil && key.account != account }
      s.flights = s.flights.filter { key, _ in account != nil && key.account != account }
      onChange()
    }
  }

  /// Forgets the kept values of `account` that `matches` picks.
  /// - Returns: whether one was kept.
  @discardableResult
  public func drop(account: String, where matches: (Value) -> Bool) -> Bool {
    state.withLock { s in
      let keys = s.entries.filter { $0.key.account == account && matches($0.value.value) }.keys
      for key in keys { s.entries[key] = nil }
      if !keys.isEmpty { onChange() }
      return !keys.isEmpty
    }
  }

  /// How many values are kept.
  public var count: Int { state.withLock { $0.entries.count } }

  /// How many callers await a fetch now, its starter included (tests: every caller has joined).
  public var waiting: Int { state.withLock { $0.waiting } }

  private static func servable(
    _ entry: Entry?, account: AccountConfig, needed: (Value) -> Int64, now: Int64
  ) -> (value: Value, servedUntil: Int64)? {
    guard let entry, entry.account == account else { return nil }
    let servedUntil = entry.expiry - needed(entry.value)
    return now <= servedUntil ? (entry.value, servedUntil) : nil
  }

  private func start(
    _ s: inout State, _ key: Key, account: AccountConfig, forceRefresh: Bool,
    fetch: @escaping @Sendable (Bool) async throws -> Value
  ) -> Task<Value, any Error> {
    s.nextID += 1
    let (id, generation) = (s.nextID, s.generations[key.account, default: 0])
    let previous = oneFetchPerAccount ? s.lastFetch[key.account] : nil
    let task = Task<Value, any Error> {
      await previous?.value
      do {
        let value = try await fetch(forceRefresh)
        self.finish(key, id: id, generation: generation, value: value, account: account)
        return value
      } catch {
        self.finish(key, id: id, generation: generation, value: nil, account: account)
        throw error
      }
    }
    if oneFetchPerAccount { s.lastFetch[key.account] = Task { _ = try? await task.value } }
    s.flights[key] = Flight(id: id, task: task)
    return task
  }

  private func finish(_ key: Key, id: Int, generation: Int, value: Value?, account: AccountConfig) {
    let now = time.now
    state.withLock { s in
      if s.flights[key]?.id == id { s.flights[key] = nil }
      guard let value, let expiry = expiry(value), expiry > now, s.generations[key.account, default: 0] == generation
      else { return }
      s.entries[key] = Entry(value: value, account: account, expiry: expiry)
      if s.entries.count > Self.bound { s.entries = s.entries.filter { $0.value.expiry > now } }
      onChange()
    }
  }
}
