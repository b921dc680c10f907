import BrokerAgent
import BrokerCore
import BrokerHTTP
import BrokerProviders
import BrokerStore
import BrokerSystem
import BrokerWire
import Glibc
import Synchronization

/// `tokenbroker exec ACCOUNT [ACCOUNT] -- COMMAND [ARG]...` (interface.md §3, §9): runs COMMAND
/// with the Azure App Service managed identity endpoint (an azure account, or a sharepoint
/// account's `via`) and the Compute Engine metadata endpoint (a google account) on 127.0.0.1,
/// alive exactly as long as COMMAND runs, or a github account's token in gh's variables
/// (interface.md §2.2), and exits with COMMAND's status.
enum ExecCommand {
  /// Variables that would make an SDK prefer another credential than the endpoints (§9).
  static let removed = [
    "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_FEDERATED_TOKEN_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS", "MSI_ENDPOINT", "MSI_SECRET", "IDENTITY_SERVER_THUMBPRINT", "IMDS_ENDPOINT",
  ]

  /// One endpoint: its name in messages, and how it serves (until stopped) and stops.
  struct Endpoint: Sendable {
    var name: String
    /// Answers requests until `stop`; throws when the server fails.
    var serve: @Sendable () async throws -> Void
    var stop: @Sendable () -> Void
  }

  static func run(_ args: [String], runtime: Runtime) async throws -> Int32 {
    let usage = Help.usage("exec")
    guard let dash = args.firstIndex(of: "--") else { throw UsageError("missing '--' before COMMAND", usage: usage) }
    let names = try Arguments(Array(args[..<dash]), command: "exec").positionals
    let command = Array(args[(dash + 1)...])
    guard !names.isEmpty else { throw UsageError("missing ACCOUNT", usage: usage) }
    guard names.count <= 2 else { throw UsageError("unexpected argument '\(names[2])'", usage: usage) }
    guard !command.isEmpty else { throw UsageError("missing COMMAND after '--'", usage: usage) }
    let (azure, google, forge) = try accounts(names, config: try runtime.config(), usage: usage)
    // Tokens and the IDENTITY_HEADER live in this process as long as COMMAND runs: no core dump.
    ProcessHardening.disableDumping()
    // A forge account's token is refreshed before COMMAND starts and handed to it in its CLI's
    // variables: gh and glab read no endpoint. One that cannot be had ends exec with its status.
    var forgeAdded: [(String, String)] = []
    if let forge {
      let token = try await runtime.accessToken(
        account: forge.name, scopes: ScopeSet(forge.scopes), minValid: nil, forceRefresh: false)
      forgeAdded = forgeVariables(forge, token: token.accessToken)
    }

    let context = runtime.context
    let reported = Mutex<Set<String>>([])
    // The store and the token service are built on the first token the agent does not serve.
    let services = try runtime.services()
    let tokens = ExecTokens(
      config: services.config, service: { services.tokenService() }, agent: try await agentLink(runtime)
    ) { message in
      if reported.withLock({ $0.insert(message).inserted }) { context.say(message) }
    }
    // What exec sets in COMMAND's environment (in this order), over what it removes.
    var added: [(String, String)] = forgeAdded
    // Config directories of COMMAND's own (az's, gcloud's), removed when it ends.
    var overlays: [@Sendable () -> Void] = []
    var servers: [(server: EndpointServer, name: String, handler: @Sendable (LoopbackRequest) async -> EndpointReply)] = []
    if let azure {
      let secret = Secret(RandomValue.base64URL(octets: 32))
      let protocolLogic = AppServiceEndpoint(identityHeader: secret) { scope in
        await tokens.token(account: azure, scopes: [scope])
      }
      let server = try EndpointServer()
      added.append(("IDENTITY_ENDPOINT", "http://127.0.0.1:\(server.port)\(AppServiceEndpoint.path)"))
      added.append(("IDENTITY_HEADER", secret.revealed))
      // DefaultAzureCredential then tries only environment, workload and managed identity: a user
      // not signed in gets tokenbroker's message, not the az CLI's or VS Code's other identity.
      if context.environment[tokenCredentials] == nil { added.append((tokenCredentials, "prod")) }
      // `az login --identity` under exec writes the identity as az's default user: into a copy of
      // the user's az settings, never their own profile (README: The Azure CLI).
      try RuntimeDirectory.ensure(runtime.paths.runtimeDirectory)
      let (directory, environment) = (runtime.paths.runtimeDirectory, context.environment)
      let overlay = try await DedicatedThread.run {
        try AzureConfigOverlay.create(runtimeDirectory: directory, environment: environment)
      }
      added.append(("AZURE_CONFIG_DIR", overlay.directory))
      overlays.append { overlay.remove() }
      servers.append((server, "Azure managed identity", protocolLogic.answer))
    }
    if let google {
      let name = google.name
      let lookup = GoogleProjectNumber(
        account: google, transport: CurlTransport(environment: context.environment), caFiles: services.config.settings.caFiles(google),
        cache: LayeredDiscoveryCache(backing: DiscoveryFileCache(directory: runtime.paths.cacheDirectory)), time: SystemTime())
      let protocolLogic = GoogleMetadataEndpoint(
        scopes: google.scopes, project: google.project,
        projectNumber: { await tokens.projectNumber(account: name, lookup: lookup) },
        token: { await tokens.token(account: name, scopes: $0) },
        idToken: { await tokens.idToken(account: name, audience: $0) },
        email: { await tokens.identity(account: name) }, now: { SystemTime().nowRoundedUp })
      let server = try EndpointServer(headers: [GoogleMetadataEndpoint.flavor])
      for variable in ["GCE_METADATA_HOST", "GCE_METADATA_IP", "GCE_METADATA_ROOT"] {
        added.append((variable, "127.0.0.1:\(server.port)"))
      }
      if let project = google.project {
        added.append(("GOOGLE_CLOUD_PROJECT", project))
      } else if gcloudTools.contains(String(command[0].split(separator: "/").last ?? "")) {
        context.say(
          "warning: '\(google.name)' has no project, so gcloud takes the metadata endpoint for no Compute Engine; "
            + "set project (and project-number) in [account \(google.name)]")
      }
      try RuntimeDirectory.ensure(runtime.paths.runtimeDirectory)
      let (directory, environment) = (runtime.paths.runtimeDirectory, context.environment)
      let overlay = try await DedicatedThread.run {
        try GcloudConfigOverlay.create(runtimeDirectory: directory, environment: environment)
      }
      added.append(("CLOUDSDK_CONFIG", overlay.directory))
      overlays.append { overlay.remove() }
      servers.append((server, "Google metadata", protocolLogic.answer))
    }
    let verbose = runtime.diagnostics.isOn  // --verbose or TOKENBROKER_VERBOSE=1
    let endpoints = servers.map { server, name, answer in
      runtime.verbose("exec: the \(name) endpoint listens on 127.0.0.1:\(server.port)")
      // With --verbose: method, path (no query) and status of each request, never a header or a token.
      let handler: @Sendable (LoopbackRequest) async -> EndpointReply = { request in
        let reply = await answer(request)
        if verbose { context.say("exec: \(name): \(request.method) \(request.path) -> \(reply.status)") }
        return reply
      }
      return Endpoint(
        name: name,
        serve: {
          try await server.serve(handler: handler) { uid in
            if verbose { context.say("exec: refused a connection to the \(name) endpoint from uid \(uid.map(String.init) ?? "unknown")") }
          }
        }, stop: server.stop)
    }
    let environment = ExecChild.environment(
      raw: context.isLive ? ExecChild.processEnvironment : nil, environment: context.environment, removed: removed, added: added)
    guard !overlays.isEmpty else { return try await serve(endpoints, command: command, environment: environment, runtime: runtime) }
    // Whatever gcloud cached under exec (its Compute Engine answer, the account, access tokens)
    // and az signed in to goes with COMMAND (bug-cases-3.md X10).
    let remove = overlays
    let status: Int32
    do {
      status = try await serve(endpoints, command: command, environment: environment, runtime: runtime)
    } catch {
      _ = try? await DedicatedThread.run { for r in remove { r() } }
      throw error
    }
    _ = try? await DedicatedThread.run { for r in remove { r() } }
    return status
  }

  /// `AZURE_TOKEN_CREDENTIALS`: azure-identity's choice of credential chain (`prod`: environment,
  /// workload identity, managed identity; azure-identity ≥ 1.23, Azure.Identity ≥ 1.14).
  static let tokenCredentials = "AZURE_TOKEN_CREDENTIALS"
  /// The commands that take the Google endpoint only with a project (gcloud's residency check).
  static let gcloudTools: Set<String> = ["gcloud", "gsutil", "bq"]

  /// Serves the endpoints while COMMAND runs; closes them when it ends. An endpoint that fails
  /// meanwhile is named on stderr at once (`tokenbroker: what failed; what to do`); COMMAND runs on.
  static func serve(
    _ endpoints: [Endpoint], command: [String], environment: [[UInt8]], runtime: Runtime
  ) async throws -> Int32 {
    let context = runtime.context
    return try await withThrowingTaskGroup(of: Void.self) { group in
      for e in endpoints {
        group.addTask {
          do {
            try await e.serve()
          } catch {
            context.say(ErrorMapping.map(error).message)
          }
        }
      }
      defer { for e in endpoints { e.stop() } }
      let child: ChildProcess
      do {
        child = try ChildProcess.start(
          ExecChild.arguments(command, raw: context.isLive ? ExecChild.processArguments : nil), environment: environment,
          path: context.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
      } catch let error as ChildStartError {
        context.say("\(error.message); check the COMMAND after '--'")
        return error.status
      }
      let exit = try await child.wait()
      runtime.verbose("exec: '\(command[0])' ended with status \(exit.status)")
      return exit.status
    }
  }

  /// The agent to ask first (`agent = auto`), or nil. Only a server of this uid is talked to
  /// (`AgentClient.connect` checks it). As the front does (interface.md §8), exec starts one when
  /// none listens at the socket and no `--config FILE` was given; a socket that is there but does
  /// not answer (a forwarded one) is never taken over, and an agent that cannot start leaves the
  /// tokens to this process.
  private static func agentLink(_ runtime: Runtime) async throws -> ExecTokens.AgentLink? {
    guard try runtime.config().settings.agent == .auto else { return nil }
    if runtime.globals.configFile == nil {
      let endpoint = AgentCommand.endpoint(runtime)
      switch AgentClient.connect(to: endpoint.socketPath) {
      case .connected(let fd): close(fd)
      case .failed: break
      case .absent:
        do {
          _ = try await AgentCommand.ensureRunning(runtime: runtime, endpoint: endpoint)
          runtime.verbose("exec: started the agent at \(endpoint.socketPath)")
        } catch {
          runtime.verbose("exec: \(error.description); this process fetches the tokens")
        }
      }
    }
    return ExecTokens.AgentLink(
      socket: runtime.paths.agentSocket, config: AgentCommand.explicitConfig(runtime),
      bus: runtime.context.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "", environment: runtime.context.environment)
  }
}
