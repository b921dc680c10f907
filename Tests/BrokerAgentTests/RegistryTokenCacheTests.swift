import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerTestSupport
import Synchronization
import Testing

/// The agent's registry tokens (interface.md §5): kept until five minutes before `exp`, one
/// exchange per account and registry, dropped with the account.
@Suite struct RegistryTokenCacheTests {
  static let key = RegistryTokenKey(account: "work", host: "myreg.azurecr.io")
  static let account = AccountConfig(name: "work", provider: .azure)

  /// Counts exchanges; the n-th hands out `RRT<n>` expiring `lifetime` seconds after `time`.
  final class Exchanger: Sendable {
    let time: FakeTime
    let lifetime: Int64?
    private let calls = Mutex(0)
    init(time: FakeTime, lifetime: Int64? = 10800) {
      self.time = time
      self.lifetime = lifetime
    }
    var count: Int { calls.withLock { $0 } }
    func exchange() async throws -> RegistryToken {
      let n = calls.withLock { c in
        c += 1
        return c
      }
      await Task.yield()
      return RegistryToken(refreshToken: Secret("RRT\(n)"), expiresOn: lifetime.map { time.now + $0 })
    }
  }

  @Test func aHundredRequestsCauseOneExchangeUntilFiveMinutesBeforeExp() async throws {
    let time = FakeTime()
    let cache = RegistryTokenCache(time: time)
    let exchanger = Exchanger(time: time)
    try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<100 {
        group.addTask { try await cache.token(for: Self.key, account: Self.account, exchange: exchanger.exchange).refreshToken.revealed }
      }
      for try await token in group { #expect(token == "RRT1") }
    }
    #expect(exchanger.count == 1)
    time.advance(by: Double(10800 - 300))
    #expect(cache.cached(Self.key, account: Self.account)?.refreshToken.revealed == "RRT1")
    time.advance(by: 1)
    #expect(cache.cached(Self.key, account: Self.account) == nil)
    #expect(try await cache.token(for: Self.key, account: Self.account, exchange: exchanger.exchange).refreshToken.revealed == "RRT2")
    #expect(exchanger.count == 2)
  }

  @Test func aTokenWithoutExpOrShorterThanTheMarginIsNeverKept() async throws {
    for lifetime: Int64? in [nil, 300, 120] {
      let time = FakeTime()
      let cache = RegistryTokenCache(time: time)
      let exchanger = Exchanger(time: time, lifetime: lifetime)
      for _ in 0..<2 { _ = try await cache.token(for: Self.key, account: Self.account, exchange: exchanger.exchange) }
      #expect(exchanger.count == 2)
      #expect(cache.count == 0)
    }
  }

  @Test func droppedWithTheAccountAndKeptPerRegistryAndConfiguration() async throws {
    let time = FakeTime()
    let cache = RegistryTokenCache(time: time)
    let exchanger = Exchanger(time: time)
    _ = try await cache.token(for: Self.key, account: Self.account, exchange: exchanger.exchange)
    let other = RegistryTokenKey(account: "work", host: "other.azurecr.io")
    #expect(cache.cached(other, account: Self.account) == nil)
    var moved = Self.account
    moved.tenant = "fabrikam.example"
    #expect(cache.cached(Self.key, account: moved) == nil)
    cache.drop(account: "someone-else")
    #expect(cache.cached(Self.key, account: Self.account) != nil)
    cache.drop(account: "work")
    #expect(cache.cached(Self.key, account: Self.account) == nil)
    _ = try await cache.token(for: Self.key, account: Self.account, exchange: exchanger.exchange)
    cache.drop(account: nil)
    #expect(cache.count == 0)
  }

  @Test func aFailedExchangeIsNotKeptAndTheNextCallerTriesAgain() async throws {
    let time = FakeTime()
    let cache = RegistryTokenCache(time: time)
    await #expect(throws: RegistryError.self) {
      try await cache.token(for: Self.key, account: Self.account) { throw RegistryError.refused(account: "work", host: "h") }
    }
    let exchanger = Exchanger(time: time)
    #expect(try await cache.token(for: Self.key, account: Self.account, exchange: exchanger.exchange).refreshToken.revealed == "RRT1")
  }

  @Test func theAgentsTokenCacheDropsRegistryTokensWithTheAccount() async throws {
    let time = FakeTime()
    let tokens = TokenCache(time: time)
    let exchanger = Exchanger(time: time)
    _ = try await tokens.registryTokens.token(for: Self.key, account: Self.account, exchange: exchanger.exchange)
    await tokens.drop(account: "work")
    #expect(tokens.registryTokens.count == 0)
  }
}
