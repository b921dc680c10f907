import BrokerCore
import BrokerProviders
import BrokerSystem
import BrokerWire
import Glibc
import Synchronization

/// `tokenbroker exec ACCOUNT [ACCOUNT] -- COMMAND [ARG]...` (interface.md §3, §9): runs COMMAND
/// with the Azure App Service managed identity endpoint (an azure account, or a sharepoint
/// account's `via`) and the Compute Engine metadata endpoint (a google account) on 127.0.0.1,
/// alive exactly as long as COMMAND runs, and exits with COMMAND's status.
enum ExecCommand {
  /// Variables that would make an SDK prefer another credential than the endpoints (§9).
  static let removed = [
    "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_FEDERATED_TOKEN_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS", "MSI_ENDPOINT", "MSI_SECRET", "IDENTITY_SERVER_THUMBPRINT", "IMDS_ENDPOINT",
  ]

  /// The endpoint a server answers with, and the variables COMMAND gets for it.
  private struct Endpoint {
    var server: EndpointServer
    var name: String
    var handler: @Sendable (LoopbackRequest) async -> EndpointReply
  }

  static func run(_ args: [String], runtime: Runtime) async throws -> Int32 {
    let usage = Help.usage("exec")
    guard let dash = args.firstIndex(of: "--") else { throw UsageError("missing '--' before COMMAND", usage: usage) }
    let names = try Arguments(Array(args[..<dash]), valued: [], flags: [], usage: usage).positionals
    let command = Array(args[(dash + 1)...])
    guard !names.isEmpty else { throw UsageError("missing ACCOUNT", usage: usage) }
    guard names.count <= 2 else { throw UsageError("unexpected argument '\(names[2])'", usage: usage) }
    guard !command.isEmpty else { throw UsageError("missing COMMAND after '--'", usage: usage) }
    let (azure, google) = try accounts(names, config: try runtime.config(), usage: usage)

    let context = runtime.context
    let reported = Mutex<Set<String>>([])
    let tokens = ExecTokens(service: try runtime.tokenService(), agent: try agentLink(runtime)) { message in
      if reported.withLock({ $0.insert(message).inserted }) { context.say(message) }
    }
    var environment = context.environment
    for name in removed { environment[name] = nil }
    var endpoints: [Endpoint] = []
    if let azure {
      let secret = Secret(RandomValue.base64URL(octets: 32))
      let protocolLogic = AppServiceEndpoint(identityHeader: secret) { scope in
        await tokens.token(account: azure, scopes: [scope])
      }
      let server = try EndpointServer()
      environment["IDENTITY_ENDPOINT"] = "http://127.0.0.1:\(server.port)\(AppServiceEndpoint.path)"
      environment["IDENTITY_HEADER"] = secret.revealed
      endpoints.append(Endpoint(server: server, name: "Azure managed identity", handler: protocolLogic.answer))
    }
    if let google {
      let name = google.name
      let protocolLogic = GoogleMetadataEndpoint(
        scopes: google.scopes, project: google.project, token: { await tokens.token(account: name, scopes: $0) },
        email: { await tokens.identity(account: name) }, now: { SystemTime().now })
      let server = try EndpointServer()
      for variable in ["GCE_METADATA_HOST", "GCE_METADATA_IP", "GCE_METADATA_ROOT"] {
        environment[variable] = "127.0.0.1:\(server.port)"
      }
      if let project = google.project { environment["GOOGLE_CLOUD_PROJECT"] = project }
      endpoints.append(Endpoint(server: server, name: "Google metadata", handler: protocolLogic.answer))
    }
    for e in endpoints { runtime.verbose("exec: the \(e.name) endpoint listens on 127.0.0.1:\(e.server.port)") }
    if runtime.globals.verbose {
      // Method, path (no query) and status of each request: never a header or a token.
      endpoints = endpoints.map { e in
        var logged = e
        logged.handler = { request in
          let reply = await e.handler(request)
          context.say("exec: \(e.name): \(request.method) \(request.path) -> \(reply.status)")
          return reply
        }
        return logged
      }
    }
    return try await serve(endpoints, command: command, environment: environment, runtime: runtime)
  }

  /// Serves the endpoints while COMMAND runs; closes them when it ends.
  private static func serve(
    _ endpoints: [Endpoint], command: [String], environment: [String: String], runtime: Runtime
  ) async throws -> Int32 {
    let context = runtime.context
    let verbose = runtime.globals.verbose
    return try await withThrowingTaskGroup(of: Void.self) { group in
      for e in endpoints {
        let name = e.name
        group.addTask {
          try await e.server.serve(handler: e.handler) { uid in
            if verbose { context.say("exec: refused a connection to the \(name) endpoint from uid \(uid.map(String.init) ?? "unknown")") }
          }
        }
      }
      defer { for e in endpoints { e.server.stop() } }
      let child: ChildProcess
      do {
        child = try ChildProcess.start(command, environment: environment)
      } catch let error as ChildStartError {
        context.say("\(error.message); check the COMMAND after '--'")
        return error.status
      }
      let exit = try await child.wait()
      runtime.verbose("exec: '\(command[0])' ended with status \(exit.status)")
      return exit.status
    }
  }

  /// The account whose tokens the Azure endpoint serves (an azure account, or a sharepoint
  /// account's `via`) and the google account, from the names given.
  /// - Throws: `UsageError` for two of a kind, an account of another provider, a sharepoint
  ///   account without `via`; `ConfigError` for an unknown account.
  static func accounts(_ names: [String], config: BrokerConfig, usage: String) throws -> (
    azure: String?, google: AccountConfig?
  ) {
    var azure: String?
    var google: AccountConfig?
    for name in names {
      let account = try config.requireAccount(name)
      if account.provider == .google {
        guard google == nil else { throw UsageError("two google accounts; exec serves one of each kind", usage: usage) }
        google = account
        continue
      }
      var served = name
      if account.provider == .sharepoint {
        guard let via = account.via, try config.requireAccount(via).provider == .azure else {
          throw UsageError("'\(name)' has no azure 'via' account whose tokens exec could serve", usage: usage)
        }
        served = via
      } else if account.provider != .azure {
        throw UsageError("'\(name)' is a \(account.provider.rawValue) account; exec serves azure, sharepoint and google accounts", usage: usage)
      }
      guard azure == nil else { throw UsageError("two azure accounts; exec serves one of each kind", usage: usage) }
      azure = served
    }
    return (azure, google)
  }

  /// The agent to ask first (`agent = auto`), or nil.
  private static func agentLink(_ runtime: Runtime) throws -> ExecTokens.AgentLink? {
    guard try runtime.config().settings.agent == .auto else { return nil }
    // As the front: a socket directory that others could write to is never trusted.
    let environment = runtime.context.environment
    guard AgentEndpoint(environment: { environment[$0] }, uid: runtime.context.uid).prepareDirectory() == nil else {
      return nil
    }
    var config = ""
    if runtime.paths.configIsExplicit, let file = runtime.paths.configFiles.first {
      config = file.hasPrefix("/") ? file : (currentDirectory() + "/" + file)
    }
    return ExecTokens.AgentLink(
      socket: runtime.paths.agentSocket, config: config, bus: runtime.context.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "")
  }

  private static func currentDirectory() -> String {
    guard let cwd = getcwd(nil, 0) else { return "." }
    defer { free(cwd) }
    return String(cString: cwd)
  }
}
