@testable import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerStore
import BrokerTestSupport
import BrokerWire
import Foundation
import Glibc
import Testing

/// Warm answers the agent keeps and gives again (`AnswerRecorder`, `TokenCache.keep`), through
/// the agent's request handler: never past a change of the cache or the config, never verbose.
@Suite struct AnswerRecorderTests {
  let h: ConfigHome
  let cache = TokenCache(time: FakeTime())
  let handler: AgentRequestHandler
  var configFile: String { h.directory + "/config/tokenbroker/config" }

  init() throws {
    h = try ConfigHome(config: fileStoreConfig)
    let environment = h.environment
    handler = requestHandler(cache: cache, environment: environment, stop: { _ in })
  }

  /// Puts `token` in the agent's memory for `work` as the config on disk now describes it.
  private func remember(_ token: String) async throws {
    let config = try ConfigParser.parse(KeyFileLoader.load(paths: ["/nonexistent", configFile], explicit: false))
    let account = try #require(config.account(named: "work"))
    let key = TokenCacheKey(account: "work", scopes: ScopeSet(account.scopes))
    _ = try await cache.token(for: key, account: account, needed: 0, forceRefresh: true) { _ in
      IssuedToken(account: "work", provider: .azure, accessToken: Secret(token), expiresOn: FakeTime().now + 3600, scopes: [], identity: nil)
    }
  }

  private func tokenGet(_ extra: [String] = []) async -> AgentReply {
    await handler.handle(.run(name: "tokenbroker", arguments: ["token", "get", "work"] + extra, config: "", input: []))
  }

  @Test func aWarmAnswerIsGivenAgainUntilTheCacheChanges() async throws {
    try await remember("AT-A")
    #expect(await tokenGet().output == Array("AT-A\n".utf8))
    #expect(cache.keptAnswers == 1)
    #expect(await tokenGet().output == Array("AT-A\n".utf8))  // the kept answer
    _ = await handler.handle(AgentRequest(operation: .drop, account: "work"))  // logout, login
    #expect(cache.keptAnswers == 0)
    try await remember("AT-B")
    #expect(await tokenGet().output == Array("AT-B\n".utf8))
  }

  /// An edited config is a new config: the kept answer is not given, the command runs again (here
  /// the account moved tenant, so the token in memory is not for it and the store has none).
  @Test func anEditedConfigIsNotAnsweredFromAKeptAnswer() async throws {
    try await remember("AT-A")
    #expect(await tokenGet().output == Array("AT-A\n".utf8))
    #expect(await tokenGet().output == Array("AT-A\n".utf8))
    try fileStoreConfig.replacingOccurrences(of: "provider = azure", with: "provider = azure\ntenant = other.example")
      .write(toFile: configFile, atomically: true, encoding: .utf8)
    let moved = await tokenGet()
    #expect(moved.exit != 0)
    #expect(moved.output.isEmpty)
  }

  @Test func verboseAnswersAreNeverKept() async throws {
    try await remember("AT-A")
    for _ in 0..<2 {
      let reply = await tokenGet(["--verbose"])
      #expect(reply.output == Array("AT-A\n".utf8))
      #expect(String(decoding: reply.error, as: UTF8.self).contains("the agent's memory had the token"))
    }
    #expect(cache.keptAnswers == 0)
    _ = await tokenGet(["--format", "json"])  // the same command without --verbose is kept
    #expect(cache.keptAnswers == 1)
  }

  /// The socket loop's `quick`: the kept answer with nothing run, and never one the slow path
  /// would not give (another request, an edited config, `agent = off`, a change of the cache).
  @Test func quickGivesOnlyTheKeptAnswerForTheSameRequestAndConfig() async throws {
    let request = AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work"], config: "", input: [])
    let paths = handler.configPaths
    #expect(handler.quick(request, paths: paths) == nil)  // nothing kept yet
    try await remember("AT-A")
    let first = await tokenGet()
    #expect(handler.quick(request, paths: paths) == first)
    #expect(handler.quick(AgentRequest(operation: .status), paths: paths) == nil)
    let json = AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work", "--format", "json"], config: "", input: [])
    #expect(handler.quick(json, paths: paths) == nil)
    try (fileStoreConfig + "\n").write(toFile: configFile, atomically: true, encoding: .utf8)  // same meaning, new bytes
    #expect(handler.quick(request, paths: paths) == nil)
    #expect(await tokenGet() == first)  // kept again under the new revision
    #expect(handler.quick(request, paths: paths) == first)
    try fileStoreConfig.replacingOccurrences(of: "store = file", with: "store = file\nagent = off")
      .write(toFile: configFile, atomically: true, encoding: .utf8)
    #expect(handler.quick(request, paths: paths) == nil)
    try fileStoreConfig.write(toFile: configFile, atomically: true, encoding: .utf8)
    _ = await tokenGet()
    #expect(handler.quick(request, paths: paths) == first)
    await cache.drop(account: "nobody")
    #expect(handler.quick(request, paths: paths) == nil)
  }

  /// `quick` runs on the socket loop's thread, where every other connection waits: it compares
  /// the config's bytes but never parses them (an edited config, or one too large to compare,
  /// a parse of GKeyFile each request, is the slow path's to parse).
  @Test func quickNeverParsesTheConfig() async throws {
    let request = AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work"], config: "", input: [])
    let paths = handler.configPaths
    try await remember("AT-A")
    let first = await tokenGet()
    #expect(handler.quick(request, paths: paths) == first)
    try (fileStoreConfig + "\n").write(toFile: configFile, atomically: true, encoding: .utf8)
    var parses = handler.configs.parseCount
    #expect(handler.quick(request, paths: paths) == nil)
    #expect(handler.configs.parseCount == parses)
    let padding = String(repeating: "# " + String(repeating: "x", count: 76) + "\n", count: 1 << 14)  // 1.25 MiB
    try (padding + fileStoreConfig).write(toFile: configFile, atomically: true, encoding: .utf8)
    #expect(await tokenGet() == first)
    parses = handler.configs.parseCount
    for _ in 0..<3 { #expect(handler.quick(request, paths: paths) == nil) }
    #expect(handler.configs.parseCount == parses)
  }

  @Test func onlyAPureAnswerFromOneTokenInMemoryIsKeepable() {
    let pure = AnswerRecorder()
    pure.took((revision: 3, servedUntil: 100))
    #expect(pure.keepable == nil)  // the command did not say its output is pure
    pure.outputIsPure()
    #expect(pure.keepable?.revision == 3)
    let fetched = AnswerRecorder()
    fetched.took(nil)
    fetched.outputIsPure()
    #expect(fetched.keepable == nil)
    let two = AnswerRecorder()
    two.took((revision: 3, servedUntil: 100))
    two.took((revision: 3, servedUntil: 100))
    two.outputIsPure()
    #expect(two.keepable == nil)
  }
}
