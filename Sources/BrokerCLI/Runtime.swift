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
    if let preset = context.agent?.config, !diagnostics.isOn {
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
    if !diagnostics.isOn { context.agent?.recorder.outputIsPure() }
  }

  /// The configured store (`ServiceFactory.store()`).
  /// - Throws: `ConfigError` (exit 64).
  func store() throws -> any SecretStore { try services().store() }

  /// What builds the store and the token service, over the loaded config.
  /// - Throws: `ConfigError` (exit 64).
  func services() throws -> ServiceFactory {
    ServiceFactory(context: context, paths: paths, diagnostics: diagnostics, config: try config())
  }

  /// `token get`, git and docker `get`: through the agent's shared cache inside the agent (a
  /// cached token needs no store and no token service: they are built only for a fetch), else
  /// straight from the token service (`AccessTokenSource`).
  func accessToken(
    account: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, kind: CredentialKind = .accessToken
  ) async throws -> IssuedToken {
    diagnostics.note(
      context.agent == nil
        ? "tokenbroker-core serves this call itself, not the agent"
        : "the agent serves this call")
    do {
      return try await tokenSource.accessToken(
        account: account, scopes: scopes, minValid: minValid, forceRefresh: forceRefresh, kind: kind, config: config(),
        diagnostics: diagnostics, service: tokenService)
    } catch ProviderError.signInRequired(let name, let reason) {
      try signInNeeded(name)
      throw ProviderError.signInRequired(account: name, reason: reason)
    }
  }

  /// Inside the agent, a caller answered "sign-in needed" for `account` makes the agent post the
  /// account's one notification (`SignInNotices`, interface.md §8.1), on its own: the caller's
  /// answer does not wait for it. - Throws: `ConfigError`.
  private func signInNeeded(_ account: String) throws {
    guard let notices = context.agent?.notices, let provider = try config().account(named: account)?.provider else { return }
    let services = try services()
    let service = services.tokenService()
    notices.signInNeeded(
      account: account, provider: provider.rawValue, settings: try config().settings, states: services.accountStates(),
      check: { try? await service.accountState(account: account) })
  }

  /// A token asked for with a resource's claims challenge (`wwwauth[]`, `token get --claims`):
  /// always refreshed with them (`TokenService.accessToken(…claims:)`), never from a cache. Inside
  /// the agent its memory of the account is dropped first, so the next plain request reads the
  /// store, which then holds the new token.
  func accessToken(account: String, scopes: ScopeSet?, claims: String) async throws -> IssuedToken {
    diagnostics.note("a claims challenge came for '\(account)': refreshing with its claims")
    await context.agent?.drop(account: account)
    return try await tokenService().accessToken(
      account: account, scopes: scopes, minValid: nil, forceRefresh: true, claims: claims)
  }

  /// git `erase` of a token we handed out: dropped from the store and from the agent's memory.
  func eraseHandedOut(account: String, token: Secret) async throws -> Bool {
    try await tokenSource.eraseHandedOut(
      account: account, token: token, service: tokenService())
  }

  /// The agent's shared cache inside the agent, else this process's own token service.
  private var tokenSource: any AccessTokenSource { context.agent?.tokenSource ?? DirectTokenSource() }

  /// The token service (`ServiceFactory.tokenService()`).
  /// - Throws: `ConfigError` (exit 64).
  func tokenService() throws -> TokenService { try services().tokenService() }

  func verbose(_ text: @autoclosure () -> String) { diagnostics.note(text()) }
}
