import BrokerWire

/// Where tokenbroker's files are (interface.md §2), computed from the environment by the rules of
/// `FileLocations` and `AgentEndpoint.runtimeDirectory` (and, without `XDG_RUNTIME_DIR`, whether
/// `/run/user/$UID` is the user's private directory).
public struct BrokerPaths: Sendable, Equatable {
  /// Config files to read, in order (later ones override key by key).
  public var configFiles: [String]
  /// True when `--config` or `TOKENBROKER_CONFIG` named the only file to read.
  public var configIsExplicit: Bool
  /// The user's config file (the one `account add` edits).
  public var userConfigFile: String
  /// `$XDG_RUNTIME_DIR/tokenbroker`, else `/run/user/$UID/tokenbroker` when that is the user's
  /// private directory, else `/tmp/tokenbroker-$UID` (`AgentEndpoint.runtimeDirectory`; created
  /// 0700 by BrokerSystem).
  public var runtimeDirectory: String
  /// True when the runtime directory is the `/tmp` fallback, whose owner and mode must be checked.
  public var runtimeDirectoryIsFallback: Bool
  /// The agent socket.
  public var agentSocket: String
  /// The opt-in plaintext store.
  public var tokenFile: String
  /// The encrypted store (`store = encrypted-file`), next to the plaintext one.
  public var encryptedTokenFile: String
  /// `$XDG_CACHE_HOME/tokenbroker` (`~/.cache/tokenbroker`): discovery documents.
  public var cacheDirectory: String

  /// - Parameters:
  ///   - environment: the process environment.
  ///   - uid: the real user id.
  ///   - configOverride: the `--config` argument, if given (wins over `TOKENBROKER_CONFIG`).
  ///   - userRuntimeRoot: where logind makes each user's runtime directory (`/run/user`).
  public init(
    environment env: [String: String], uid: UInt32, configOverride: String? = nil,
    userRuntimeRoot: String = AgentEndpoint.userRuntimeRoot
  ) {
    let files = FileLocations(environment: { env[$0] })
    userConfigFile = files.userConfigFile
    if let explicit = configOverride ?? files.explicitConfigFile {
      configFiles = [explicit]
      configIsExplicit = true
      userConfigFile = explicit
    } else {
      configFiles = files.defaultConfigFiles
      configIsExplicit = false
    }
    (runtimeDirectory, runtimeDirectoryIsFallback) = AgentEndpoint.runtimeDirectory(
      environment: { env[$0] }, uid: uid, userRuntimeRoot: userRuntimeRoot)
    agentSocket = env["TOKENBROKER_AGENT_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? runtimeDirectory + "/agent.sock"
    tokenFile = files.dataDirectory + "/tokens.json"
    encryptedTokenFile = files.dataDirectory + "/tokens.enc"
    cacheDirectory = files.cacheDirectory
  }
}
