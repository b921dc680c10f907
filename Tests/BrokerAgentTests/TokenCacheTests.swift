import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerTestSupport
import Synchronization
import Testing

/// A token service stand-in: counts fetches, hands out `AT<n>` valid for `lifetime` seconds, and
/// can hold every fetch until released.
final class FakeFetcher: Sendable {
  let time: FakeTime
  let lifetime: Int64
  private let state = Mutex<(calls: Int, running: Int, maxRunning: Int, forced: [Bool])>((0, 0, 0, []))
  private let gate: AsyncStream<Void>
  private let gateOpen: AsyncStream<Void>.Continuation
  let holds: Bool

  init(time: FakeTime, lifetime: Int64 = 3600, holds: Bool = false) {
    self.time = time
    self.lifetime = lifetime
    self.holds = holds
    (gate, gateOpen) = AsyncStream.makeStream(of: Void.self)
  }

  var calls: Int { state.withLock { $0.calls } }
  var maxRunning: Int { state.withLock { $0.maxRunning } }
  var forced: [Bool] { state.withLock { $0.forced } }

  /// Lets one held fetch finish.
  func release() { gateOpen.yield() }

  func fetch(_ account: String = "work", force: Bool) async throws -> IssuedToken {
    let n = state.withLock { s in
      s.calls += 1
      s.running += 1
      s.maxRunning = max(s.maxRunning, s.running)
      s.forced.append(force)
      return s.calls
    }
    defer { state.withLock { $0.running -= 1 } }
    if holds {
      var it = gate.makeAsyncIterator()
      _ = await it.next()
    } else {
      await Task.yield()
    }
    return IssuedToken(
      account: account, provider: .azure, accessToken: Secret("AT\(n)"), expiresOn: time.now + lifetime, scopes: ["s"],
      identity: "user1@example.test")
  }
}

final class Counter: Sendable {
  private let state = Mutex(0)
  func add() { state.withLock { $0 += 1 } }
  func reset() { state.withLock { $0 = 0 } }
  var value: Int { state.withLock { $0 } }
}

@Suite struct TokenCacheTests {
  let time = FakeTime()
  let account = AccountConfig(name: "work", provider: .azure)
  let key = TokenCacheKey(account: "work", scopes: ScopeSet(["s"]))

  private func get(
    _ cache: TokenCache, _ fetcher: FakeFetcher, key: TokenCacheKey? = nil, needed: Int64 = 300, force: Bool = false,
    account: AccountConfig? = nil
  ) async throws -> String {
    let k = key ?? self.key
    return try await cache.token(for: k, account: account ?? self.account, needed: needed, forceRefresh: force) { f in
      try await fetcher.fetch(k.account, force: f)
    }.accessToken.revealed
  }

  @Test func validTokenIsServedFromMemory() async throws {
    let cache = TokenCache(time: time)
    let fetcher = FakeFetcher(time: time)
    #expect(try await get(cache, fetcher) == "AT1")
    time.advance(by: 3000)  // 600 s left > 300
    #expect(try await get(cache, fetcher) == "AT1")
    #expect(fetcher.calls == 1)
  }

  @Test func tokenInsideTheMarginOrMinValidIsFetchedAgain() async throws {
    let cache = TokenCache(time: time)
    let fetcher = FakeFetcher(time: time)
    _ = try await get(cache, fetcher)
    time.advance(by: 3301)  // 299 s left < refresh margin 300
    #expect(try await get(cache, fetcher) == "AT2")
    #expect(try await get(cache, fetcher, needed: 3599) == "AT2")  // 3600 s left
    #expect(try await get(cache, fetcher, needed: 3601) == "AT3")  // --min-valid beyond what is left
    #expect(fetcher.calls == 3)
  }

  @Test func forceRefreshAndAnotherConfigSkipMemory() async throws {
    let cache = TokenCache(time: time)
    let fetcher = FakeFetcher(time: time)
    _ = try await get(cache, fetcher)
    #expect(try await get(cache, fetcher, force: true) == "AT2")
    #expect(fetcher.forced == [false, true])
    var moved = account
    moved.tenant = "other.example"
    #expect(try await get(cache, fetcher, account: moved) == "AT3")
    let other = TokenCacheKey(account: "work", scopes: ScopeSet(["s", "t"]))
    #expect(try await get(cache, fetcher, key: other) == "AT4")
    #expect(try await get(cache, fetcher, account: moved) == "AT3")
  }

  @Test func twoHundredConcurrentCallersCauseOneFetch() async throws {
    let cache = TokenCache(time: time)
    let fetcher = FakeFetcher(time: time, holds: true)
    let tokens = try await withThrowingTaskGroup(of: String.self) { group in
      for i in 0..<200 {
        group.addTask { try await get(cache, fetcher, force: i % 7 == 0) }
      }
      while cache.waiting < 200 { await Task.yield() }  // every caller has joined the flight
      fetcher.release()
      return try await group.reduce(into: [String]()) { $0.append($1) }
    }
    #expect(tokens.count == 200)
    #expect(Set(tokens) == ["AT1"])
    #expect(fetcher.calls == 1)
  }

  @Test func aFailedFetchIsSharedAndNotCached() async throws {
    struct Boom: Error {}
    let cache = TokenCache(time: time)
    let calls = Counter()
    let (key, account) = (self.key, self.account)
    let results = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<20 {
        group.addTask {
          do {
            _ = try await cache.token(for: key, account: account, needed: 300, forceRefresh: false) { _ in
              calls.add()
              while cache.waiting < 20 { await Task.yield() }  // every caller has joined
              throw Boom()
            }
            return true
          } catch { return false }
        }
      }
      return await group.reduce(into: [Bool]()) { $0.append($1) }
    }
    #expect(results.allSatisfy { !$0 })
    #expect(calls.value == 1)
    let fetcher = FakeFetcher(time: time)
    #expect(try await get(cache, fetcher) == "AT1")
  }

  @Test func dropForgetsAtOnceAndAFetchRunningThenIsNotCached() async throws {
    let cache = TokenCache(time: time)
    let fetcher = FakeFetcher(time: time, holds: true)
    async let first = get(cache, fetcher)
    while fetcher.calls == 0 { await Task.yield() }
    await cache.drop(account: "work")
    fetcher.release()
    #expect(try await first == "AT1")  // asked before the drop: gets its answer
    async let second = get(cache, fetcher)
    while fetcher.calls < 2 { await Task.yield() }
    fetcher.release()
    #expect(try await second == "AT2")  // AT1 was not cached
    #expect(await cache.count == 1)
    await cache.drop(account: "other")
    #expect(await cache.count == 1)
    await cache.drop(account: nil)
    #expect(await cache.count == 0)
  }

  /// B20: a caller arriving after a drop never joins the fetch that began before it.
  @Test func aCallerAfterTheDropStartsItsOwnFetch() async throws {
    let cache = TokenCache(time: time)
    let fetcher = FakeFetcher(time: time, holds: true)
    async let first = get(cache, fetcher)
    while fetcher.calls == 0 { await Task.yield() }
    await cache.drop(account: "work")
    async let second = get(cache, fetcher)
    fetcher.release()  // fetches of one account run one after the other: the first ends, then
    while fetcher.calls < 2 { await Task.yield() }  // a second one runs, not the first one joined
    fetcher.release()
    #expect(try await first == "AT1")
    #expect(try await second == "AT2")
  }

  @Test func erasedTokenIsDroppedOnlyWhenItMatches() async throws {
    let cache = TokenCache(time: time)
    let fetcher = FakeFetcher(time: time)
    _ = try await get(cache, fetcher)
    #expect(await cache.drop(account: "work", token: Secret("AT_OLD")) == false)
    #expect(try await get(cache, fetcher) == "AT1")
    #expect(await cache.drop(account: "work", token: Secret("AT1")) == true)
    #expect(try await get(cache, fetcher) == "AT2")
  }

  @Test func fetchesOfOneAccountNeverOverlap() async throws {
    let cache = TokenCache(time: time)
    let fetcher = FakeFetcher(time: time)
    try await withThrowingTaskGroup(of: String.self) { group in
      for i in 0..<10 {
        let k = TokenCacheKey(account: "work", scopes: ScopeSet(["s\(i)"]))
        group.addTask { try await get(cache, fetcher, key: k) }
      }
      try await group.waitForAll()
    }
    #expect(fetcher.calls == 10)
    #expect(fetcher.maxRunning == 1)
  }
}
