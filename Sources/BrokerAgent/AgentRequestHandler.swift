import BrokerCore
import BrokerStore
import BrokerWire
import Glibc

/// What `tokenbroker agent run` answers: `run` requests are run as tokenbroker-core would run
/// them (`runCommand`, the config as it is now: `AgentConfigCache`) with the agent's shared token
/// cache; a cached token is answered without a store or a token service; `drop`, `status` and
/// `stop` act on the agent itself; `unlock`, `lock` and `store` go to `StoreRequestHandler`.
public struct AgentRequestHandler: Sendable {
  /// Runs one command's argv as the full program would, in `environment`, with `input` as its
  /// standard input and `agent` as what it is given inside the agent: its exit status and the
  /// bytes it wrote to standard output and standard error. The CLI's one seam into the agent.
  public typealias RunCommand = @Sendable (
    _ argv: [String], _ environment: [String: String], _ input: [UInt8], _ agent: AgentSide
  ) async -> (exit: Int32, output: [UInt8], error: [UInt8])

  let cache: TokenCache
  /// The agent's explicit config file (absolute), or "" for the default files.
  let config: String
  /// The agent's environment, in which every command runs.
  let environment: [String: String]
  /// What `status` answers as the agent's version.
  let programVersion: String
  let runCommand: RunCommand
  let stop: @Sendable (_ why: String) -> Void
  /// The encrypted store's key, when unlocked (`StoreRequestHandler`).
  let keys: StoreKeyHolder
  /// The config as last parsed, for every request while its files stay the same.
  let configs: AgentConfigCache
  /// The notifications of accounts that need signing in (interface.md §8.1), or nil.
  let notices: SignInNotices?

  /// - Parameters:
  ///   - cache: the agent's access tokens and kept answers.
  ///   - config: the agent's explicit config file (absolute), or "" for the default files.
  ///   - environment: the agent's environment, in which every command runs.
  ///   - programVersion: what `status` answers.
  ///   - runCommand: how a `run` request's argv is run.
  ///   - stop: ends the agent's server; given why, in words for the agent's log (no value).
  ///   - keys: the encrypted store's key holder.
  ///   - notices: the agent's sign-in notifications, or nil for none.
  public init(
    cache: TokenCache, config: String, environment: [String: String], programVersion: String,
    runCommand: @escaping RunCommand, stop: @escaping @Sendable (_ why: String) -> Void, keys: StoreKeyHolder = StoreKeyHolder(),
    configs: AgentConfigCache = AgentConfigCache(), notices: SignInNotices? = nil
  ) {
    self.notices = notices
    self.cache = cache
    self.config = config
    self.environment = environment
    self.programVersion = programVersion
    self.runCommand = runCommand
    self.stop = stop
    self.keys = keys
    self.configs = configs
  }

  /// The environment every command runs in: the agent's, with the agent's explicit config.
  var commandEnvironment: [String: String] {
    var environment = self.environment
    environment["TOKENBROKER_CONFIG"] = config.isEmpty ? nil : config
    return environment
  }
  /// The config files every command reads (`commandEnvironment`'s).
  public var configPaths: BrokerPaths { BrokerPaths(environment: commandEnvironment, uid: getuid()) }

  /// The answer kept for a repeated `run` request (`TokenCache.answer`), given on the socket
  /// loop's thread with nothing built and no hop (`AgentServer`'s `quick`); nil for anything
  /// else. A kept answer was made for this very request (bus, config, arguments and input are
  /// part of its key), so only the config files' revision is checked again: they are read and
  /// compared byte for byte, as every request's are, but never parsed here (an edited config is
  /// the slow path's to parse). `paths`: `configPaths`, computed once.
  public func quick(_ request: AgentRequest, paths: BrokerPaths) -> AgentReply? {
    guard request.operation == .run, cache.hasKeptAnswer(for: request),
      let (config, revision) = configs.unchanged(files: paths.configFiles), config.settings.agent == .auto
    else { return nil }
    return cache.answer(to: request, configRevision: revision)
  }

  public func handle(_ request: AgentRequest) async -> AgentReply {
    switch request.operation {
    case .status:
      return AgentReply(exit: 0, pid: getpid(), programVersion: programVersion)
    case .stop:
      // The key first: a refresh under way in another process still needs this agent to store
      // its rotated token, which it could not once the agent stops accepting.
      await keys.drop()
      stop("'tokenbroker agent stop' asked")
      return AgentReply(exit: 0)
    case .drop:
      await AccountDrop.drop(request.account, from: cache, config: request.account == nil ? nil : readableConfig())
      // A sign-in or sign-out elsewhere (a drop is how the agent hears of it) ends its notification.
      if let notices {
        for name in request.account.map({ [$0] }) ?? (readableConfig()?.accounts.map(\.name) ?? []) {
          notices.settled(account: name)
        }
      }
      return AgentReply(exit: 0)
    case .run:
      return await run(request)
    case .unlock, .lock, .store:
      let paths = BrokerPaths(environment: environment, uid: getuid())
      let handler = StoreRequestHandler(keys: keys, path: paths.encryptedTokenFile, socketPath: paths.agentSocket) {
        _ = await handle(AgentRequest(operation: .drop, account: $0))
      }
      return await handler.handle(request)
    }
  }

  /// The agent's config as its files are now, for `AccountDrop`'s dependents; nil when it cannot
  /// be read (the account alone is dropped then).
  func readableConfig() -> BrokerConfig? {
    let paths = BrokerPaths(environment: environment, uid: getuid(), configOverride: config.isEmpty ? nil : config)
    guard let raw = try? KeyFileLoader.load(paths: paths.configFiles, explicit: paths.configIsExplicit) else { return nil }
    return try? ConfigParser.parse(raw)
  }

  /// Runs one hot-path command; `notServed` for anything else, or when the caller reads another
  /// config than this agent (it was started with another `--config`/`TOKENBROKER_CONFIG`).
  /// A caller in another D-Bus session is not served either, and the agent stops: its keyring
  /// connection belongs to a session that has most likely ended (a desktop logout), and the
  /// caller's next call starts an agent in its own session. A caller without a session bus (a
  /// cron job) is served with the agent's.
  func run(_ request: AgentRequest) async -> AgentReply {
    if !request.bus.isEmpty && request.bus != (environment["DBUS_SESSION_BUS_ADDRESS"] ?? "") {
      stop("a caller is in another D-Bus session, so this one has most likely ended; its next call starts an agent there")
      return .notServed
    }
    let argv = [request.name] + request.arguments
    guard request.config == config, let route = AgentRoute.classify(argv), route.configFile == nil else {
      return .notServed
    }
    var environment = commandEnvironment
    // The front does not read the config when an agent answers: `agent = off` is honoured here,
    // and a config that does not load is the full program's error to report.
    let paths = configPaths
    // A caller whose HOME or XDG_* names other files reads another config (and store): its own.
    var callerView = environment
    for name in AgentProtocol.pathEnvironment { if let value = request.environment[name] { callerView[name] = value } }
    guard BrokerPaths(environment: callerView, uid: getuid()) == paths else { return .notServed }
    guard let (config, configRevision) = try? await currentConfig(paths) else { return .notServed }
    guard config.settings.agent == .auto else { return .notServed }
    for name in AgentProtocol.forwardedEnvironment + AgentProtocol.proxyEnvironment {
      environment[name] = request.environment[name]
    }
    // Kept only for a run that said its answer is pure (`Runtime.answerIsPure`, never verbose).
    if let kept = cache.answer(to: request, configRevision: configRevision) { return kept }
    let recorder = AnswerRecorder()
    let agent = AgentSide(cache: cache, keys: keys, config: config, recorder: recorder, notices: notices)
    let result = await runCommand(argv, environment, request.input, agent)
    // After a refresh, the warm answers of the next hour need none of libcurl's code.
    CodePages.release()
    let reply = AgentReply(exit: result.exit, output: result.output, error: result.error)
    if reply.exit == 0, let hit = recorder.keepable {
      cache.keep(reply, to: request, configRevision: configRevision, revision: hit.revision, servedUntil: hit.servedUntil)
    }
    return reply
  }

  /// The config as its files are now (`AgentConfigCache.current`), with the cached tokens that a
  /// newly parsed config made stale dropped first.
  /// - Throws: `ConfigError`.
  func currentConfig(_ paths: BrokerPaths) async throws -> (config: BrokerConfig, revision: Int) {
    let (config, revision, stale) = try configs.current(files: paths.configFiles, explicit: paths.configIsExplicit)
    switch stale {
    case .none: break
    case .all: await AccountDrop.drop(nil, from: cache, config: config)
    case .accounts(let names): for name in names { await AccountDrop.drop(name, from: cache, config: config) }
    }
    return (config, revision)
  }
}
