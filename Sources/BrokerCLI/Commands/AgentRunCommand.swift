import BrokerAgent
import BrokerCore
import BrokerStore
import BrokerSystem
import BrokerWire
import Glibc
import Synchronization

/// `tokenbroker agent run`: the resident agent in the foreground (interface.md §8), on its socket
/// and on its forwarding socket (`forward.sock` beside it; requests there answered by
/// `AgentRequestHandler.handleForwarded`).
///
/// Order: no core dumps and no ptrace (`PR_SET_DUMPABLE=0`) first; the config is read (for
/// `agent-idle-timeout`; every request re-reads it); with the Secret Service store, the keyring
/// connection is started (`LibsecretStore.connectAhead`); the socket is taken (`AgentListener`: 0700
/// directory, one agent per socket by `flock`, or systemd's); then it serves until `stop` or
/// `agent-idle-timeout` seconds without a connection on either socket (not while it holds the encrypted store's
/// key, `StoreKeyHolder`, which it drops before it exits). Another agent already serving the socket is
/// no error: this one exits 0 at once (200 clients starting agents at once end with one).
enum AgentRunCommand {
  static func run(runtime: Runtime, endpoint: AgentEndpoint) async throws -> ExitStatus {
    ProcessHardening.apply()
    let settings = try runtime.config().settings
    // The first request of a session reads the keyring: its connection is made meanwhile. Its few
    // descriptors come before any connection is accepted, and the server's reserve keeps room for
    // GLib's later ones.
    if settings.store == .secretService { LibsecretStore.connectAhead() }
    let context = runtime.context
    let config = AgentCommand.explicitConfig(runtime)
    let listener: AgentListener
    do {
      listener = try AgentListener.open(endpoint: endpoint, environment: context.environment)
    } catch .alreadyRunning {
      runtime.verbose("an agent already serves \(endpoint.socketPath); leaving it to that one")
      return .success
    } catch {
      context.say(error.description)
      return .failure
    }
    defer { listener.close() }
    // The forwarding socket beside it (interface.md §8); without it the agent serves its own.
    let forwarding: AgentListener?
    do {
      forwarding = try AgentListener.openForwarding(endpoint: endpoint, environment: context.environment)
    } catch {
      runtime.verbose("no forwarding socket: \(error.description)")
      forwarding = nil
    }
    defer { forwarding?.close() }
    _ = chdir("/")
    let verbose = runtime.diagnostics.isOn
    let cache = TokenCache(time: SystemTime())
    // Locked again (`lock`, `unlock-timeout`): nothing read from the store stays in memory either.
    // The key goes only once the refreshes under way have stored their rotated tokens.
    let keys = StoreKeyHolder(
      keyUse: StoreKeyUseLock(socketPath: endpoint.socketPath), log: { line in if verbose { context.say("agent: " + line) } },
      onDrop: { await AccountDrop.drop(nil, from: cache, config: nil) })
    // While the encrypted store is unlocked, a rotated refresh token waits to be written
    // (`AgentStore`), or after `tokenbroker forward` (`AgentEndpoint.forwardKeepPath`: the far side
    // cannot start an agent), the agent does not exit for idleness.
    let keepPath = endpoint.forwardKeepPath
    // One notification per account whose sign-in died, on the agent's session bus (interface.md
    // §8.1); while one of its own is up, the agent does not exit for idleness either.
    let notices = SignInNotices(
      busAddress: context.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "",
      log: { line in if verbose { context.say("agent: " + line) } })
    let server = try AgentServer(
      listenFD: listener.fd, forwardFD: forwarding?.fd ?? -1, idleTimeout: settings.agentIdleTimeout,
      keepAlive: { keys.isUnlocked || cache.unwritten.count > 0 || access(keepPath, F_OK) == 0 || notices.outstanding },
      log: { line in if verbose { context.say("agent: " + line) } })
    var environment = context.environment
    for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { environment[name] = nil }
    // A click on the notification runs the account's sign-in here, in the agent's environment.
    let flowEnvironment = environment.merging(config.isEmpty ? [:] : ["TOKENBROKER_CONFIG": config]) { $1 }
    notices.onSignIn { account in
      Task { await AgentSignIn.run(account: account, environment: flowEnvironment, notices: notices, log: { line in if verbose { context.say("agent: " + line) } }) }
    }
    let handler = AgentRequestHandler(
      cache: cache, config: config, environment: environment, programVersion: BrokerCommand.version,
      runCommand: runCommand,
      stop: { why in
        if verbose { context.say("agent: stopping: " + why) }
        server.stop()
      }, keys: keys, notices: notices)
    runtime.verbose("agent \(getpid()) serving \(endpoint.socketPath)")
    let paths = handler.configPaths
    try await server.run(quick: { handler.quick($0, paths: paths) }, forwarded: { await handler.handleForwarded($0) }) {
      await handler.handle($0)
    }
    await keys.drop()  // zeroed before the process ends
    runtime.verbose("agent \(getpid()) exiting")
    return .success
  }

  /// How the agent runs a `run` request's argv (`AgentRequestHandler.RunCommand`): as
  /// tokenbroker-core would (`BrokerCommand.main`), with standard input and output in memory, not
  /// interactive, and `agent` as its `ProcessContext.agent`.
  static let runCommand: AgentRequestHandler.RunCommand = { argv, environment, input, agent in
    let output = Mutex<[UInt8]>([])
    let error = Mutex<[UInt8]>([])
    var context = ProcessContext(
      environment: environment, uid: getuid(), readInput: { limit in input.count > limit ? nil : input },
      writeOutput: { text in output.withLock { $0.append(contentsOf: text.utf8) } },
      writeError: { text in error.withLock { $0.append(contentsOf: text.utf8) } }, isInteractive: false)
    context.agent = agent
    let status = await BrokerCommand.main(arguments: argv, context: context)
    return (status, output.withLock { $0 }, error.withLock { $0 })
  }
}
