import BrokerAgent
import BrokerCore
import BrokerTestSupport
import BrokerWire
import Testing

/// The answers the agent keeps (`TokenCache.keep`/`answer`): given again only while nothing
/// cached changed, the config is the same and the token is still one memory would serve.
@Suite struct TokenCacheAnswerTests {
  let time = FakeTime()
  let account = AccountConfig(name: "work", provider: .azure)
  let key = TokenCacheKey(account: "work", scopes: ScopeSet(["s"]))
  let request = AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work"], config: "", input: [])
  let reply = AgentReply(exit: 0, output: Array("AT1\n".utf8))

  /// A cache holding AT1 for `key`, and what `cachedWithRevision` says of it (300 s margin).
  private func warmCache() async throws -> (TokenCache, revision: Int, servedUntil: Int64) {
    let cache = TokenCache(time: time)
    let fetcher = FakeFetcher(time: time)
    _ = try await cache.token(for: key, account: account, needed: 300, forceRefresh: false) { f in try await fetcher.fetch(force: f) }
    let hit = try #require(await cache.cachedWithRevision(key, account: account, needed: { _ in 300 }))
    #expect(hit.servedUntil == time.now + 3600 - 300)
    return (cache, hit.revision, hit.servedUntil)
  }

  @Test func aKeptAnswerIsGivenToTheSameRequestOnly() async throws {
    let (cache, revision, until) = try await warmCache()
    cache.keep(reply, to: request, configRevision: 1, revision: revision, servedUntil: until)
    #expect(cache.answer(to: request, configRevision: 1) == reply)
    let other = AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work", "--format", "json"], config: "", input: [])
    #expect(cache.answer(to: other, configRevision: 1) == nil)
    #expect(cache.answer(to: request, configRevision: 2) == nil)  // the config was parsed anew
  }

  @Test func anyChangeOfTheCacheForgetsEveryKeptAnswer() async throws {
    let (cache, revision, until) = try await warmCache()
    cache.keep(reply, to: request, configRevision: 1, revision: revision, servedUntil: until)
    await cache.drop(account: "someone-else")  // logout of another account: still a change
    #expect(cache.answer(to: request, configRevision: 1) == nil)
    // An answer made before a change is not kept after it.
    cache.keep(reply, to: request, configRevision: 1, revision: revision, servedUntil: until)
    #expect(cache.answer(to: request, configRevision: 1) == nil)
  }

  @Test func gitEraseOfTheTokenForgetsIt() async throws {
    let (cache, revision, until) = try await warmCache()
    cache.keep(reply, to: request, configRevision: 1, revision: revision, servedUntil: until)
    #expect(await cache.drop(account: "work", token: Secret("not-ours")) == false)
    #expect(cache.answer(to: request, configRevision: 1) == reply)  // nothing dropped, nothing changed
    #expect(await cache.drop(account: "work", token: Secret("AT1")))
    #expect(cache.answer(to: request, configRevision: 1) == nil)
  }

  @Test func noAnswerOnceTheTokenIsDueForRefresh() async throws {
    let (cache, revision, until) = try await warmCache()
    cache.keep(reply, to: request, configRevision: 1, revision: revision, servedUntil: until)
    time.advance(by: 3300)  // exactly 300 s left: memory still serves it
    #expect(cache.answer(to: request, configRevision: 1) == reply)
    time.advance(by: 1)
    #expect(cache.answer(to: request, configRevision: 1) == nil)
    #expect(await cache.cachedWithRevision(key, account: account, needed: { _ in 300 }) == nil)
  }

  @Test func keptAnswersAreBounded() async throws {
    let (cache, revision, until) = try await warmCache()
    for n in 0...TokenCache.answerCapacity {
      let r = AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work", "--min-valid", "\(n)"], config: "", input: [])
      cache.keep(reply, to: r, configRevision: 1, revision: revision, servedUntil: until)
    }
    let last = AgentRequest.run(
      name: "tokenbroker", arguments: ["token", "get", "work", "--min-valid", "\(TokenCache.answerCapacity)"], config: "", input: [])
    #expect(cache.answer(to: last, configRevision: 1) == reply)
    let first = AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work", "--min-valid", "0"], config: "", input: [])
    #expect(cache.answer(to: first, configRevision: 1) == nil)
  }
}
