import BrokerAgent
import BrokerCore
import BrokerHTTP
import BrokerProviders
import BrokerStore
import BrokerSystem

/// Builds the configured store and the token service from a loaded config. `Sendable`, so a
/// task of its own may build them on first use (`tokenbroker exec` builds none while the agent
/// serves every token); `Runtime.store()` and `Runtime.tokenService()` build through it.
struct ServiceFactory: Sendable {
  let context: ProcessContext
  let paths: BrokerPaths
  let diagnostics: Diagnostics
  let config: BrokerConfig

  /// The configured store: the Secret Service, the plaintext file when `store = file`, or with
  /// `store = encrypted-file` the agent's (`AgentHeldStore`; inside the agent, the file itself).
  func store() -> any SecretStore {
    let store = configuredStore()
    return diagnostics.isOn ? DiagnosedStore(store, diagnostics: diagnostics) : store
  }

  private func configuredStore() -> any SecretStore {
    switch config.settings.store {
    case .secretService:
      // Inside the agent, a replaced keyring daemon or a collection locked meanwhile is seen as a
      // new tokenbroker-core process would see it: libsecret's cached connection is made anew for
      // each request that uses the store (one served from memory never builds a store at all).
      if context.agent != nil { LibsecretStore.forgetConnection() }
      // Concurrent processes serialise their writes (create + read-back) on a lock file in the
      // private runtime directory (bug-cases.md B06); without a usable directory they write unlocked.
      let directory = paths.runtimeDirectory
      let lock = (try? RuntimeDirectory.ensure(directory)).map { directory + "/keyring.lock" }
      return forProcess(LibsecretStore(writeLock: lock))
    case .file:
      let context = self.context
      return forProcess(FileStore(path: paths.tokenFile, warn: { context.say("warning: " + $0) }))
    case .encryptedFile:
      // Only the agent holds the key and touches the file (interface.md §7.1).
      let path = paths.encryptedTokenFile
      guard let keys = context.agent?.keys else { return AgentHeldStore(socketPath: paths.agentSocket, path: path) }
      return forProcess(EncryptedFileStore(path: path, key: { keys.key(for: path) }))
    }
  }

  /// Outside the agent, changes to the store are followed by a notice to a running agent
  /// (`AgentNoticeStore`); inside it, by a drop from the agent's own memory (`AgentStore`).
  private func forProcess(_ store: any SecretStore) -> any SecretStore {
    if let agent = context.agent { return agent.store(over: store) }
    return AgentNoticeStore(base: store, socketPath: paths.agentSocket)
  }

  /// Where each account's state is kept (interface.md §8.1): files in the runtime directory,
  /// beside the refresh locks; this process's memory without a usable one.
  func accountStates() -> any AccountStates {
    let directory = paths.runtimeDirectory
    return (try? RuntimeDirectory.ensure(directory)) != nil ? AccountStateFile(runtimeDirectory: directory) : MemoryAccountStates()
  }

  /// The token service over `store()`, libcurl, the refresh lock, the account states and the
  /// discovery cache.
  func tokenService() -> TokenService {
    let context = self.context
    // Refreshes of one account take turns across processes (`RefreshLockFile`, in the runtime
    // directory); without a usable one (refused, and then named, by the agent and by `login`) they
    // cannot.
    let directory = paths.runtimeDirectory
    var lock: any RefreshLock =
      (try? RuntimeDirectory.ensure(directory)) != nil ? RefreshLockFile(runtimeDirectory: directory) : NoRefreshLock()
    if config.settings.store == .encryptedFile {
      // The agent keeps the key until a refresh has stored its rotated token (bug-cases-3.md X16).
      lock = KeyHeldRefreshLock(
        base: lock, keyUse: StoreKeyUseLock(socketPath: paths.agentSocket), storePath: paths.encryptedTokenFile)
    }
    // The command's environment: in the agent, the caller's proxy settings (interface.md §8).
    let curl = CurlTransport(environment: context.environment)
    let transport: any HTTPTransport =
      diagnostics.isOn ? DiagnosedTransport(curl, diagnostics: diagnostics) : curl
    return TokenService(
      config: config, store: store(), transport: transport, time: SystemTime(), refreshLock: lock,
      accountStates: accountStates(), diagnostics: diagnostics,
      discoveryCache: LayeredDiscoveryCache(backing: DiscoveryFileCache(directory: paths.cacheDirectory)),
      warn: { context.say("warning: " + $0) })
  }
}
