import BrokerCore
import BrokerHTTP
import BrokerProviders
import BrokerStore
import BrokerSystem

/// What a command needs, built on first use: paths, the validated config, the store, the token
/// service. One per process; never shared across tasks.
final class Runtime {
  let context: ProcessContext
  let globals: GlobalOptions
  let paths: BrokerPaths
  /// `--verbose` or `TOKENBROKER_VERBOSE=1` (interface.md §3): lines to stderr; off otherwise.
  let diagnostics: Diagnostics
  private var loadedConfig: BrokerConfig?

  init(context: ProcessContext, globals: GlobalOptions) {
    self.context = context
    self.globals = globals
    self.paths = BrokerPaths(environment: context.environment, uid: context.uid, configOverride: globals.configFile)
    let on = globals.verbose || context.environment["TOKENBROKER_VERBOSE"] == "1"
    self.diagnostics = on ? Diagnostics { [context] in context.say($0) } : .off
  }

  /// The merged, validated config; warnings go to stderr once.
  /// - Throws: `ConfigError` (exit 64).
  func config() throws -> BrokerConfig {
    if let loadedConfig { return loadedConfig }
    let diagnostics = self.diagnostics
    let config: BrokerConfig
    if let preset = context.agentConfig, !diagnostics.isOn {
      config = preset
    } else {
      let raw = try KeyFileLoader.load(paths: paths.configFiles, explicit: paths.configIsExplicit) { path, found in
        diagnostics.note(found ? "read config \(path)" : "no config at \(path)")
      }
      config = try ConfigParser.parse(raw)
    }
    for w in config.warnings { context.say("warning: " + w) }
    loadedConfig = config
    return config
  }

  /// The command's answer depends on nothing but its request, the config and the one token it
  /// took: inside the agent it may be given again to the same request (`AnswerRecorder`); never
  /// a `--verbose` one, whose lines say how long ago things happened.
  func answerIsPure() {
    if !diagnostics.isOn { context.answerRecorder?.outputIsPure() }
  }

  /// The configured store: the Secret Service, the plaintext file when `store = file`, or with
  /// `store = encrypted-file` the agent's (`AgentHeldStore`; inside the agent, the file itself).
  func store() throws -> any SecretStore {
    let store = try configuredStore()
    return diagnostics.isOn ? DiagnosedStore(store, diagnostics: diagnostics) : store
  }

  private func configuredStore() throws -> any SecretStore {
    let settings = try config().settings
    switch settings.store {
    case .secretService:
      // Inside the agent, a replaced keyring daemon or a collection locked meanwhile is seen as a
      // new tokenbroker-core process would see it: libsecret's cached connection is made anew for
      // each request that uses the store (one served from memory never builds a store at all).
      if context.tokenSource is SharedTokenSource { LibsecretStore.forgetConnection() }
      // Concurrent processes serialise their writes (create + read-back) on a lock file in the
      // private runtime directory (B06); without a usable directory they write unlocked.
      let directory = paths.runtimeDirectory
      let lock = (try? RuntimeDirectory.ensure(directory)).map { directory + "/keyring.lock" }
      return forProcess(LibsecretStore(writeLock: lock))
    case .file:
      let context = self.context
      return forProcess(FileStore(path: paths.tokenFile, warn: { context.say("warning: " + $0) }))
    case .encryptedFile:
      // Only the agent holds the key and touches the file (interface.md §7.1).
      let path = paths.encryptedTokenFile
      guard let keys = context.storeKeys else { return AgentHeldStore(socketPath: paths.agentSocket, path: path) }
      return forProcess(EncryptedFileStore(path: path, key: { keys.key(for: path) }))
    }
  }

  /// Outside the agent, changes to the store are followed by a notice to a running agent
  /// (`AgentNoticeStore`); inside it, by a drop from the agent's own memory (`AgentStore`).
  private func forProcess(_ store: any SecretStore) -> any SecretStore {
    if let shared = context.tokenSource as? SharedTokenSource { return AgentStore(base: store, cache: shared.cache) }
    return AgentNoticeStore(base: store, socketPath: paths.agentSocket)
  }

  /// `token get`, git and docker `get`: through the agent's shared cache inside the agent (a
  /// cached token needs no store and no token service: they are built only for a fetch), else
  /// straight from the token service (`AccessTokenSource`).
  func accessToken(account: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool) async throws -> IssuedToken {
    diagnostics.note(
      context.tokenSource == nil
        ? "tokenbroker-core serves this call itself, not the agent"
        : "the agent serves this call")
    return try await (context.tokenSource ?? DirectTokenSource()).accessToken(
      account: account, scopes: scopes, minValid: minValid, forceRefresh: forceRefresh, config: config(),
      diagnostics: diagnostics, service: tokenService)
  }

  /// git `erase` of a token we handed out: dropped from the store and from the agent's memory.
  func eraseHandedOut(account: String, token: Secret) async throws -> Bool {
    try await (context.tokenSource ?? DirectTokenSource()).eraseHandedOut(
      account: account, token: token, service: tokenService())
  }

  func tokenService() throws -> TokenService {
    let context = self.context
    // Refreshes of one account take turns across processes (issue 13 item 7); without a usable
    // runtime directory (refused, and then named, by the agent and by `login`) they cannot.
    let directory = paths.runtimeDirectory
    let lock: any RefreshLock =
      (try? RuntimeDirectory.ensure(directory)) != nil ? RefreshLockFile(runtimeDirectory: directory) : NoRefreshLock()
    let transport: any HTTPTransport =
      diagnostics.isOn ? DiagnosedTransport(CurlTransport(), diagnostics: diagnostics) : CurlTransport()
    return TokenService(
      config: try config(), store: try store(), transport: transport, time: SystemTime(), refreshLock: lock,
      diagnostics: diagnostics,
      discoveryCache: LayeredDiscoveryCache(backing: DiscoveryFileCache(directory: paths.cacheDirectory)),
      warn: { context.say("warning: " + $0) })
  }

  func verbose(_ text: @autoclosure () -> String) { diagnostics.note(text()) }
}
