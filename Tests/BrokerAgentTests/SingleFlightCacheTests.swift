import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerTestSupport
import Synchronization
import Testing

/// The generic single-flight cache under `TokenCache` and `RegistryTokenCache`.
@Suite struct SingleFlightCacheTests {
  struct Key: AccountScopedKey {
    var account: String
    var name = "a"
  }
  /// Values are `IssuedToken`s from the token cache's `FakeFetcher` (`AT<n>` for the n-th fetch).
  typealias Cache = SingleFlightCache<Key, IssuedToken>
  typealias Fetcher = FakeFetcher

  let time = FakeTime()
  let account = AccountConfig(name: "work", provider: .oidc)
  let key = Key(account: "work")

  private func get(
    _ cache: Cache, _ fetcher: Fetcher, key: Key? = nil, needed: Int64 = 0, force: Bool = false
  ) async throws -> Int {
    try await cache.value(for: key ?? self.key, account: account, needed: { _ in needed }, forceRefresh: force) { _ in
      try await fetcher.fetch(force: false)
    }.n
  }

  private func makeCache(oneFetchPerAccount: Bool = false, onChange: @escaping @Sendable () -> Void = {}) -> Cache {
    Cache(time: time, oneFetchPerAccount: oneFetchPerAccount, expiry: { $0.expiresOn }, onChange: onChange)
  }

  @Test func aValueIsServedUntilItsExpiryLessNeeded() async throws {
    let cache = makeCache()
    let fetcher = Fetcher(time: time)
    #expect(try await get(cache, fetcher) == 1)
    time.advance(by: 3000)
    #expect(try await get(cache, fetcher, needed: 600) == 1)
    #expect(cache.cached(key, account: account, needed: { _ in 600 })?.servedUntil == time.now)
    #expect(try await get(cache, fetcher, needed: 601) == 2)
    #expect(try await get(cache, fetcher, force: true) == 3)
    var moved = account
    moved.tenant = "other.example"
    #expect(cache.cached(key, account: moved) == nil)
    #expect(fetcher.calls == 3)
  }

  @Test func concurrentCallersShareOneFetch() async throws {
    let cache = makeCache()
    let fetcher = Fetcher(time: time, holds: true)
    let values = try await withThrowingTaskGroup(of: Int.self) { group in
      for i in 0..<50 { group.addTask { try await get(cache, fetcher, force: i % 5 == 0) } }
      while cache.waiting < 50 { await Task.yield() }  // every caller has joined the flight
      fetcher.release()
      return try await group.reduce(into: [Int]()) { $0.append($1) }
    }
    #expect(values.count == 50 && Set(values) == [1])
    #expect(fetcher.calls == 1)
  }

  @Test func aFailedFetchIsSharedAndKeepsNothing() async throws {
    struct Boom: Error {}
    let cache = makeCache()
    let calls = Counter()
    let (key, account) = (self.key, self.account)
    let failures = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<10 {
        group.addTask {
          do {
            _ = try await cache.value(for: key, account: account) { _ in
              calls.add()
              while cache.waiting < 10 { await Task.yield() }  // every caller has joined
              throw Boom()
            }
            return false
          } catch { return error is Boom }
        }
      }
      return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
    }
    #expect(failures == 10 && calls.value == 1)
    #expect(cache.count == 0)
  }

  @Test func aValueWithoutOrPastItsExpiryIsNeverKept() async throws {
    for lifetime: Int64? in [nil, 0, -5] {
      let cache = Cache(time: time, expiry: { t in lifetime.map { _ in t.expiresOn } })
      let fetcher = Fetcher(time: time, lifetime: lifetime ?? 3600)
      for _ in 0..<2 { _ = try await get(cache, fetcher) }
      #expect(fetcher.calls == 2)
      #expect(cache.count == 0)
    }
  }

  @Test func aDropForgetsAtOnceAndAFetchRunningThenKeepsNothing() async throws {
    let cache = makeCache()
    let fetcher = Fetcher(time: time, holds: true)
    async let first = get(cache, fetcher)
    while fetcher.calls == 0 { await Task.yield() }
    cache.drop(account: "work")
    async let second = get(cache, fetcher)  // after the drop: never joins the first fetch
    while fetcher.calls < 2 { await Task.yield() }
    fetcher.release()
    fetcher.release()
    #expect(Set([try await first, try await second]) == [1, 2])
    #expect(cache.cached(key, account: account)?.value.n == 2)
    cache.drop(account: "other")
    #expect(cache.count == 1)
    cache.drop(account: nil)
    #expect(cache.count == 0)
  }

  @Test func dropWherePicksValuesOfTheAccount() async throws {
    let cache = makeCache()
    let fetcher = Fetcher(time: time)
    _ = try await get(cache, fetcher)
    _ = try await get(cache, fetcher, key: Key(account: "work", name: "b"))
    #expect(cache.drop(account: "other") { _ in true } == false)
    #expect(cache.drop(account: "work") { $0.n == 9 } == false)
    #expect(cache.drop(account: "work") { $0.n == 1 } == true)
    #expect(cache.count == 1)
  }

  @Test func fetchesOfOneAccountRunOneAfterTheOtherOnlyWhenAsked() async throws {
    for serial in [true, false] {
      let cache = makeCache(oneFetchPerAccount: serial)
      let fetcher = Fetcher(time: time, holds: true)
      async let a = get(cache, fetcher, key: Key(account: "work", name: "a"))
      async let b = get(cache, fetcher, key: Key(account: "work", name: "b"))
      while cache.waiting < 2 { await Task.yield() }
      if serial {
        try await Task.sleep(for: .milliseconds(50))  // a second fetch would have started by now
        #expect(fetcher.calls == 1)
      } else {
        while fetcher.calls < 2 { await Task.yield() }  // both run at once
      }
      fetcher.release()
      fetcher.release()
      _ = try await (a, b)
      #expect(fetcher.maxRunning == (serial ? 1 : 2))
    }
  }

  @Test func onChangeIsToldOfEveryKeepAndDrop() async throws {
    let changes = Counter()
    let cache = makeCache(onChange: { changes.add() })
    let fetcher = Fetcher(time: time)
    _ = try await get(cache, fetcher)
    #expect(changes.value == 1)
    _ = try await get(cache, fetcher)  // served from memory: no change
    #expect(changes.value == 1)
    cache.drop(account: "work") { $0.n == 7 }  // nothing matched: no change
    #expect(changes.value == 1)
    cache.drop(account: "work")
    #expect(changes.value == 2)
  }

  @Test func pastTheBoundTheExpiredValuesAreForgotten() async throws {
    let cache = makeCache()
    let short = Fetcher(time: time, lifetime: 10)
    for i in 0..<64 { _ = try await get(cache, short, key: Key(account: "work", name: "s\(i)")) }
    #expect(cache.count == 64)
    time.advance(by: 11)
    _ = try await get(cache, Fetcher(time: time), key: Key(account: "work", name: "long"))
    #expect(cache.count == 1)
  }
}

extension IssuedToken {
  /// Which fetch of a `FakeFetcher` made this token (`AT<n>`).
  fileprivate var n: Int { Int(accessToken.revealed.dropFirst(2)) ?? -1 }
}
