import BrokerCore
import BrokerProviders

/// The docker credential helper, run under the name `docker-credential-tokenbroker`
/// (interface.md §5; protocols.md §7.1, docker/docker-credential-helpers).
///
/// argv[1] is the action. Everything docker reads goes to **stdout**, errors included: docker runs
/// the helper with its stdout captured and shows that text when the status is not 0; a reply of
/// exactly `credentials not found in native keychain` with status 1 means "no credentials here" and
/// docker goes on without any. Every error message also goes to stderr (`fail`), for a person or a
/// log that reads it there. Other failures keep tokenbroker's exit codes (interface.md §6: 3 sign
/// in, 4 provider, 5 keyring, 64 config), which docker treats alike (any status but 0 is an error).
enum DockerHelperCommand {
  static let notFound = "credentials not found in native keychain"
  static let usage = "usage: docker-credential-tokenbroker get | store | erase | list | version"
  /// Largest request read from stdin (a server URL, or a `store` JSON document), bytes.
  static let maxInput = 65536

  /// Runs one action; never throws: every outcome is a reply on stdout and a status.
  /// - Parameters:
  ///   - args: argv after the program name.
  /// - Returns: the exit status.
  static func main(_ args: [String], context: ProcessContext) async -> Int32 {
    guard args.count == 1, let action = args.first else {
      context.writeOutput(usage + "\n")
      return ExitStatus.failure.rawValue
    }
    let runtime = Runtime(context: context, globals: GlobalOptions())
    do {
      switch action {
      case "get": return try await get(runtime: runtime)
      case "list": return try await list(runtime: runtime)
      case "store", "erase": return try keepNothing(action: action, runtime: runtime)
      case "version", "--version", "-v":
        context.writeOutput("docker-credential-tokenbroker (tokenbroker) \(BrokerCommand.version)\n")
        return 0
      case "--help", "-h":
        context.writeOutput(usage + "\n")
        return 0
      default:
        fail("unknown credential action `\(TerminalText.clean(action))`", context: context)
        context.writeOutput(usage + "\n")
        return ExitStatus.failure.rawValue
      }
    } catch {
      let mapped = ErrorMapping.map(error)
      switch mapped.status {
      case .signInRequired, .storeUnavailable:
        // No credentials here for now, and the registry's other users must go on: docker-py, which
        // collects every registry's credentials before a build, skips a registry whose reply holds
        // the not-found phrase and fails the whole build on any other (interface.md §5).
        fail(notFound + " (tokenbroker: " + mapped.message + ")", context: context)
      default:
        fail("tokenbroker: " + mapped.message, context: context)
      }
      return mapped.status.rawValue
    }
  }

  /// One error line, on stdout where docker, podman and skopeo read it, and on stderr.
  static func fail(_ line: String, context: ProcessContext) {
    context.writeOutput(line + "\n")
    context.writeError(line + "\n")
  }

  /// `store` (a `{"ServerURL":…,"Username":…,"Secret":…}` document on stdin) and `erase` (a server
  /// URL): for a host an account serves, nothing to keep or forget (the tokens are ours; `az acr
  /// login` runs `docker login` for such a registry), exit 0. For any other host, or input that
  /// names none, exit 1 with one line saying that tokenbroker keeps no registry passwords: as
  /// docker's `credsStore` it would otherwise throw away the password `docker login` hands it and
  /// report success (interface.md §5). The input is read whole, so a writer never gets SIGPIPE, and
  /// the secret in it goes nowhere.
  private static func keepNothing(action: String, runtime: Runtime) throws -> Int32 {
    let context = runtime.context
    let bytes = context.readInput(maxInput) ?? []
    let address: String?
    if action == "store" {
      address = JSONText.decode(StoreRequest.self, bytes: bytes)?.serverURL
    } else {
      address = String(validating: bytes, as: UTF8.self)?.trimmingWhitespace()
    }
    guard let address, let host = RegistryAddress.host(of: address) else {
      fail("tokenbroker: the \(action) request on stdin names no registry; nothing was \(action == "store" ? "stored" : "erased")", context: context)
      return ExitStatus.failure.rawValue
    }
    if let match = try HostResolver(config: runtime.config()).resolve(host: host) {
      runtime.verbose("'\(host)' is served by account '\(match.account.name)': nothing to \(action)")
      return 0
    }
    fail(
      "tokenbroker keeps no registry passwords, so the credential for '\(host)' was not \(action == "store" ? "stored" : "erased"); "
        + "name tokenbroker in docker's credHelpers for the registries it serves, not as credsStore",
      context: context)
    return ExitStatus.failure.rawValue
  }

  /// The one field of a `store` document that tokenbroker reads; `Username` and `Secret` are not
  /// decoded.
  private struct StoreRequest: Decodable {
    var serverURL: String
    enum CodingKeys: String, CodingKey { case serverURL = "ServerURL" }
  }

  /// `get`: the server URL on stdin; `{"ServerURL":…,"Username":…,"Secret":…}` on stdout.
  private static func get(runtime: Runtime) async throws -> Int32 {
    let context = runtime.context
    guard let bytes = context.readInput(maxInput), let text = String(validating: bytes, as: UTF8.self) else {
      fail("tokenbroker: the registry address on stdin is too long or not UTF-8; nothing was looked up", context: context)
      return ExitStatus.failure.rawValue
    }
    let serverURL = text.trimmingWhitespace()
    if serverURL.isEmpty {
      fail("no credentials server URL", context: context)
      return ExitStatus.failure.rawValue
    }
    guard let host = RegistryAddress.host(of: serverURL) else {
      fail("tokenbroker: cannot read a registry host in the server URL; nothing was looked up", context: context)
      return ExitStatus.failure.rawValue
    }
    guard let match = try HostResolver(config: runtime.config()).resolve(host: host) else {
      runtime.verbose("no account serves '\(host)'")
      context.writeOutput(notFound + "\n")
      return ExitStatus.failure.rawValue
    }
    runtime.verbose("'\(host)' is served by account '\(match.account.name)' (\(match.rule))")
    if match.registry == .acr && match.account.provider != .azure {
      throw ConfigError.accountKey(
        match.account.name, "hosts",
        "'\(host)' is an Azure Container Registry, which takes only an azure account's token; serve it with an azure account")
    }
    if match.registry == .acr {
      let registry = try await runtime.registryToken(host: host, account: match.account) {
        try await runtime.accessToken(
          account: match.account.name, scopes: ScopeSet(match.scopes), minValid: nil, forceRefresh: false
        ).accessToken
      }
      reply(serverURL: serverURL, username: AzureRegistryExchange.username, secret: registry.refreshToken, context: context)
      return 0
    }
    let token = try await runtime.accessToken(
      account: match.account.name, scopes: ScopeSet(match.scopes), minValid: nil, forceRefresh: false)
    reply(serverURL: serverURL, username: match.username ?? token.identity ?? "tokenbroker", secret: token.accessToken, context: context)
    runtime.answerIsPure()
    return 0
  }

  private static func reply(serverURL: String, username: String, secret: Secret, context: ProcessContext) {
    context.writeOutput(
      "{\"ServerURL\":\(JSONText.encode(serverURL)),\"Username\":\(JSONText.encode(username)),"
        + "\"Secret\":\(JSONText.encode(secret.revealed))}\n")
  }

  /// `list`: `{"https://HOST":"USERNAME",…}` for every configured exact host (patterns cannot be
  /// listed). A host without a configured username shows the signed-in identity, or `tokenbroker`;
  /// an Azure Container Registry the user name its tokens go with.
  private static func list(runtime: Runtime) async throws -> Int32 {
    let hosts = try HostResolver(config: runtime.config()).configuredHosts
    var identities: [String: String] = [:]
    var entries: [String: String] = [:]
    for (host, match) in hosts {
      // An ACR host is given the registry's user name with the exchanged token.
      var username = match.registry == .acr ? AzureRegistryExchange.username : match.username
      if username == nil {
        let name = match.account.name
        if identities[name] == nil {
          // Best effort: a locked keyring must not hide the hosts.
          identities[name] = (try? await runtime.tokenService().status(account: name))?.identity ?? "tokenbroker"
        }
        username = identities[name]
      }
      entries["https://" + host] = username
    }
    runtime.context.writeOutput(JSONText.encode(entries) + "\n")
    return 0
  }
}

/// Registry addresses as docker passes them: `https://europe-west1-docker.pkg.dev`,
/// `europe-west1-docker.pkg.dev`, `registry.example:5000/v2/`, `https://index.docker.io/v1/`.
enum RegistryAddress {
  /// The lower-cased `host[:port]` of `address` (scheme, user info, path, query dropped), or nil
  /// when there is none or it holds characters a host cannot (control characters, spaces).
  static func host(of address: String) -> String? {
    var rest = Substring(address)
    if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") { rest = rest[rest.index(colon, offsetBy: 3)...] }
    if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
    if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
    let host = rest.lowercased()
    guard !host.isEmpty, host.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else { return nil }
    return host
  }
}

extension String {
  /// The string without leading and trailing white space and line ends.
  func trimmingWhitespace() -> String {
    var s = Substring(self)
    while let f = s.first, f.isWhitespace { s.removeFirst() }
    while let l = s.last, l.isWhitespace { s.removeLast() }
    return String(s)
  }
}
