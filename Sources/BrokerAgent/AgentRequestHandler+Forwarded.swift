import BrokerCore
import BrokerWire
import Glibc

extension AgentRequestHandler {
  /// A request on the forwarding socket (interface.md §8): answered from the agent's own config
  /// and store, whatever HOME, XDG paths, config or D-Bus session the far caller has, and only
  /// for `token get` (every format, `exec-credential` among them) and the git and docker helper
  /// actions, with the tokens of `forward = yes` accounts alone (`AgentSide.forwarded`). `status`
  /// is answered; everything else is refused with one line (`ForwardRefusal`, exit 64; an
  /// account not forwarded: exit 3). Never `notServed`: the far end's full program has no store
  /// of this agent's to fall back to. No answer given here is kept, and none kept is given.
  public func handleForwarded(_ request: AgentRequest) async -> AgentReply {
    switch request.operation {
    case .status: return AgentReply(exit: 0, pid: getpid(), programVersion: programVersion)
    case .run: return await runForwarded(request)
    case .drop, .store: return Self.refusal(.notServed(what: "changing the agent's store"))
    case .stop: return Self.refusal(.notServed(what: "'tokenbroker agent stop'"))
    case .unlock: return Self.refusal(.notServed(what: "'tokenbroker unlock'"))
    case .lock: return Self.refusal(.notServed(what: "'tokenbroker lock'"))
    }
  }

  func runForwarded(_ request: AgentRequest) async -> AgentReply {
    let argv = [request.name] + request.arguments
    guard let route = AgentRoute.classify(argv) else {
      return Self.refusal(.notServed(what: "'" + ([request.name] + request.arguments.prefix(2)).joined(separator: " ") + "'"))
    }
    guard route.configFile == nil else {
      return Self.refusal(.notServed(what: "--config (the agent answers from its own config)"))
    }
    let config: BrokerConfig
    do {
      config = try await currentConfig(configPaths).config
    } catch {
      return AgentReply(exit: ExitStatus.usage.rawValue, error: Array("tokenbroker: \(error)\n".utf8))
    }
    var environment = commandEnvironment
    for name in AgentProtocol.forwardedEnvironment { environment[name] = request.environment[name] }
    let agent = AgentSide(cache: cache, keys: keys, config: config, recorder: AnswerRecorder(), forwarded: true)
    let result = await runCommand(argv, environment, request.input, agent)
    CodePages.release()
    return AgentReply(exit: result.exit, output: result.output, error: result.error)
  }

  static func refusal(_ refusal: ForwardRefusal) -> AgentReply {
    AgentReply(exit: refusal.exitStatus.rawValue, error: Array("tokenbroker: \(refusal.description)\n".utf8))
  }
}
