import BrokerAgent
@testable import BrokerCLI
import BrokerCore
import BrokerProviders
import BrokerSystem
import BrokerWire
import Synchronization
import Testing

/// Where exec's endpoints take tokens from: the agent first; the token service (store, libcurl)
/// only for a call the agent does not serve, built once; a decline is kept.
@Suite struct ExecTokensTests {
  struct NotBuilt: Error {}

  /// Counts the agent requests and the token service builds; the agent answers with `reply`.
  final class Counts: Sendable {
    let asked = Mutex(0)
    let requests = Mutex<[AgentRequest]>([])
    let built = Mutex(0)
    let reply: AgentReply?
    init(reply: AgentReply?) { self.reply = reply }
  }

  static func config() throws -> (BrokerConfig, CLIHarness) {
    let h = try CLIHarness(config: fileStoreConfig)
    return (try AgentConfigCache().config(files: [h.directory + "/config/tokenbroker/config"], explicit: true), h)
  }

  static func tokens(
    _ counts: Counts, config: BrokerConfig, service: @escaping @Sendable () throws -> TokenService = { throw NotBuilt() }
  ) -> ExecTokens {
    ExecTokens(
      config: config,
      service: {
        counts.built.withLock { $0 += 1 }
        return try service()
      },
      agent: ExecTokens.AgentLink(socket: "/nonexistent", config: "", bus: "", environment: ["HOME": "/home/x", "SECRETLESS": "no"]),
      ask: { request in
        counts.asked.withLock { $0 += 1 }
        counts.requests.withLock { $0.append(request) }
        return counts.reply
      }, report: { _ in })
  }

  @Test func whileTheAgentServesEveryTokenNoServiceIsBuilt() async throws {
    let (config, _) = try Self.config()
    let json = #"{"access_token":"at-agent","expires_on":2000000000}"#
    let counts = Counts(reply: AgentReply(exit: 0, output: Array(json.utf8)))
    let tokens = Self.tokens(counts, config: config)
    for scopes in [nil, ["https://graph.microsoft.com/.default"], nil] {
      let t = await tokens.token(account: "work", scopes: scopes)
      #expect(t == .success(EndpointToken(accessToken: Secret("at-agent"), expiresOn: 2_000_000_000)))
    }
    #expect(counts.asked.withLock { $0 } == 3)
    #expect(counts.built.withLock { $0 } == 0)
    // As the front's: HOME travels (the agent declines another HOME), other variables do not.
    #expect(counts.requests.withLock { $0.map(\.environment) } == Array(repeating: ["HOME": "/home/x"], count: 3))
  }

  @Test func aDeclineIsKeptNoAnswerIsNotAndTheServiceIsBuiltOnce() async throws {
    let (config, h) = try Self.config()
    for reply in [AgentReply.notServed, nil] {
      let counts = Counts(reply: reply)
      let context = ProcessContext(
        environment: ["HOME": h.directory, "XDG_CONFIG_HOME": h.directory + "/config", "XDG_DATA_HOME": h.directory + "/data",
          "XDG_RUNTIME_DIR": h.directory],
        uid: 0, readInput: { _ in [] }, writeOutput: { _ in }, writeError: { _ in }, isInteractive: false)
      let factory = ServiceFactory(
        context: context, paths: BrokerPaths(environment: context.environment, uid: 0, configOverride: nil),
        diagnostics: .off, config: config)
      let tokens = Self.tokens(counts, config: config, service: { factory.tokenService() })
      for _ in 0..<3 {
        // Not signed in: the file store has no refresh token.
        guard case .failure(let f) = await tokens.token(account: "work", scopes: nil) else {
          Issue.record("a token without a sign-in")
          continue
        }
        #expect(f.kind == .signInRequired)
        #expect(f.message.contains("tokenbroker login work"))
      }
      // A decline stands for the exec; no answer (no agent, one restarting) is asked again.
      #expect(counts.asked.withLock { $0 } == (reply == nil ? 3 : 1), "after \(String(describing: reply))")
      #expect(counts.built.withLock { $0 } == 1)
    }
  }

  @Test func anAnsweredFailureIsNoDeclineAndNothingIsBuilt() async throws {
    let (config, _) = try Self.config()
    let error = "tokenbroker: warning: something\ntokenbroker: 'work' is not signed in; run 'tokenbroker login work'\n"
    let counts = Counts(reply: AgentReply(exit: ExitStatus.signInRequired.rawValue, error: Array(error.utf8)))
    let tokens = Self.tokens(counts, config: config)
    for _ in 0..<2 {
      let t = await tokens.token(account: "work", scopes: nil)
      #expect(
        t == .failure(EndpointFailure(kind: .signInRequired, message: "'work' is not signed in; run 'tokenbroker login work'")))
    }
    #expect(counts.asked.withLock { $0 } == 2)
    #expect(counts.built.withLock { $0 } == 0)
  }
}
