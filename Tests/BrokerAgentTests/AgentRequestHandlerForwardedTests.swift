@testable import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerStore
import BrokerTestSupport
import BrokerWire
import Foundation
import Glibc
import Testing

/// Requests on the forwarding socket (interface.md §8), in-process through the real commands:
/// the agent's own config and store whatever the far caller's HOME or config, `token get` and
/// the helper actions for `forward = yes` accounts only, everything else refused with one line.
@Suite struct AgentRequestHandlerForwardedTests {
  let h: ConfigHome
  let cache = TokenCache(time: FakeTime())
  let handler: AgentRequestHandler
  var configFile: String { h.directory + "/config/tokenbroker/config" }

  static let config = fileStoreConfig.replacingOccurrences(of: "hosts = git.example.test", with: "hosts = git.example.test\nforward = yes") + """

    [account other]
    provider = azure
    client-id = cid2
    authority = http://127.0.0.1:9
    hosts = other.example.test
    """

  init() throws {
    h = try ConfigHome(config: Self.config)
    let environment = h.environment
    handler = requestHandler(cache: cache, environment: environment)
  }

  /// Puts `token` in the agent's memory for `name` as the config describes it.
  private func remember(_ name: String, _ token: String) async throws {
    let config = try ConfigParser.parse(KeyFileLoader.load(paths: [configFile], explicit: true))
    let account = try #require(config.account(named: name))
    _ = try await cache.token(for: TokenCacheKey(account: name, scopes: ScopeSet(account.scopes)), account: account, needed: 0, forceRefresh: true) { _ in
      IssuedToken(account: name, provider: .azure, accessToken: Secret(token), expiresOn: FakeTime().now + 3600, scopes: [], identity: "someone")
    }
  }

  private func forwarded(_ name: String, _ args: [String], input: String = "", environment: [String: String] = [:], config: String = "")
    async -> AgentReply
  {
    var request = AgentRequest.run(name: name, arguments: args, config: config, input: Array(input.utf8))
    request.environment = environment
    return await handler.handleForwarded(request)
  }

  private func oneLine(_ reply: AgentReply) -> String {
    let text = String(decoding: reply.error, as: UTF8.self)
    #expect(text.hasPrefix("tokenbroker: ") && text.hasSuffix("\n") && text.dropLast().contains("\n") == false, "\(text)")
    return text
  }

  @Test func aForwardedAccountIsServedWhateverTheCallersFiles() async throws {
    try await remember("work", "AT-WORK")
    for environment in [[:], ["HOME": "/home/far", "XDG_CONFIG_HOME": "/far/config", "XDG_DATA_HOME": "/far/data"]] {
      let reply = await forwarded("tokenbroker", ["token", "get", "work"], environment: environment)
      #expect(reply.exit == 0)
      #expect(reply.output == Array("AT-WORK\n".utf8))
    }
    let git = await forwarded("git-credential-tokenbroker", ["get"], input: "protocol=https\nhost=git.example.test\n\n")
    #expect(git.exit == 0)
    #expect(String(decoding: git.output, as: UTF8.self).contains("password=AT-WORK\n"))
    #expect(cache.keptAnswers == 0)  // a forwarded answer is never kept
  }

  /// The account not forwarded is refused from memory and from the store alike: exit 3, one
  /// line, no token; its host through the git helper too.
  @Test func anAccountWithoutForwardIsRefused() async throws {
    try await remember("other", "AT-OTHER")
    let token = await forwarded("tokenbroker", ["token", "get", "other"])
    #expect(token.exit == 3)
    #expect(token.output.isEmpty)
    #expect(oneLine(token).contains("forward = yes"))
    let git = await forwarded("git-credential-tokenbroker", ["get"], input: "protocol=https\nhost=other.example.test\n\n")
    #expect(git.exit == 3)
    #expect(!String(decoding: git.output + git.error, as: UTF8.self).contains("AT-OTHER"))
    // Not in memory: the store is not read for it either (the file store holds none; still 3, not "not signed in").
    await cache.drop(account: nil)
    let stored = await forwarded("tokenbroker", ["token", "get", "other", "--force-refresh"])
    #expect(stored.exit == 3)
    #expect(oneLine(stored).contains("does not forward"))
  }

  @Test func everythingElseIsRefusedWithOneLine() async throws {
    for (name, args) in [
      ("tokenbroker", ["login", "work"]), ("tokenbroker", ["logout", "work"]), ("tokenbroker", ["unlock"]),
      ("tokenbroker", ["account", "remove", "work"]), ("tokenbroker", ["agent", "stop"]), ("tokenbroker", ["status"]),
      ("tokenbroker", ["--config", "/far/config", "token", "get", "work"]),
    ] {
      let reply = await forwarded(name, args)
      #expect(reply.exit == 64, "\(args)")
      #expect(reply.output.isEmpty)
      #expect(oneLine(reply).contains("cannot be done over a forwarded agent"), "\(args)")
    }
    for operation in [AgentOperation.drop, .stop, .unlock, .lock, .store] {
      let reply = await handler.handleForwarded(AgentRequest(operation: operation, account: "work"))
      #expect(reply.exit == 64, "\(operation)")
      #expect(oneLine(reply).contains("forwarded agent"))
    }
    let status = await handler.handleForwarded(AgentRequest(operation: .status))
    #expect(status.exit == 0 && status.pid == getpid())
  }
}
