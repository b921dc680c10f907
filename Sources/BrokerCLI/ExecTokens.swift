import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerSystem
import BrokerWire
import Synchronization

/// Where `tokenbroker exec`'s endpoints take tokens from (interface.md §9): the running agent,
/// asked exactly as `token get ACCOUNT --scope S --format json` through the front asks it, so
/// every process shares its cache and single-flight refresh; when no agent serves the call (none
/// runs, `agent = off`, another config), this process's own `TokenCache` in front of the token
/// service, so concurrent SDK calls of this COMMAND still cause one refresh.
///
/// The store, libcurl and the token service are built on the first call the agent does not serve,
/// never while it serves them all; after the agent declined once (or none answered), every later
/// call goes straight to the local path, for the life of the exec.
final class ExecTokens: Sendable {
  /// How to reach the agent: its socket, the explicit config (absolute, or ""), the D-Bus address,
  /// and this process's environment, of which a request carries what the front's would
  /// (`AgentProtocol.carriedEnvironment`: the agent declines a caller of another HOME or XDG_*).
  struct AgentLink: Sendable {
    var socket: String
    var config: String
    var bus: String
    var environment: [String: String] = [:]
  }

  /// Sends one request to the agent: its reply, or nil when none answers (`AgentCall.send`).
  typealias Ask = @Sendable (AgentRequest) async -> AgentReply?

  let config: BrokerConfig
  let local: SharedTokenSource
  /// Writes a failure's line to tokenbroker's stderr, once per distinct message.
  let report: @Sendable (String) -> Void
  private let agent: (link: AgentLink, ask: Ask)?
  private let build: @Sendable () throws -> TokenService
  private let built = Mutex<TokenService?>(nil)
  private let agentDeclined = Mutex(false)
  private let identities = Mutex<[String: String]>([:])
  private let numberLookup = Mutex<Task<Result<String, EndpointFailure>, Never>?>(nil)

  /// - Parameters:
  ///   - config: the validated config of this exec.
  ///   - service: builds the token service (and its store), called at most once, on first need.
  ///   - agent: the agent to ask first, or nil (`agent = off`).
  ///   - ask: how a request reaches it (default: `AgentCall.send` bounded by
  ///     `AgentProtocol.replyBound`).
  init(
    config: BrokerConfig, service: @escaping @Sendable () throws -> TokenService, agent: AgentLink?, ask: Ask? = nil,
    report: @escaping @Sendable (String) -> Void
  ) {
    self.config = config
    self.build = service
    self.local = SharedTokenSource(cache: TokenCache(time: SystemTime()))
    self.agent = agent.map { link in
      (link, ask ?? { await AgentCall.send($0, to: link.socket, bound: AgentProtocol.replyBound) })
    }
    self.report = report
  }

  /// A token of `account` for `scopes` (nil: the account's), as `token get` would hand it out.
  func token(account: String, scopes: [String]?) async -> Result<EndpointToken, EndpointFailure> {
    if let answer = await viaAgent(account: account, scopes: scopes) { return answer }
    do {
      let t = try await local.accessToken(
        account: account, scopes: scopes.map { ScopeSet($0) }, minValid: nil, forceRefresh: false,
        config: config, diagnostics: .off, service: service)
      if let identity = t.identity { identities.withLock { $0[account] = identity } }
      return .success(EndpointToken(accessToken: t.accessToken, expiresOn: t.expiresOn))
    } catch {
      let mapped = ErrorMapping.map(error)
      return .failure(failure(mapped.status.rawValue, mapped.message))
    }
  }

  /// The account's ID token (`kind: .idToken`, from this process's cache or the store; a refresh
  /// when it is due) if it was issued to `audience`: the account's `client-id` or
  /// `device-client-id`, whichever the sign-in used. Nil for any other audience: a user account
  /// cannot mint ID tokens for others (bug-cases-3.md X11), and no other token is handed out in its place.
  func idToken(account name: String, audience: String) async -> Result<Secret?, EndpointFailure> {
    guard let account = config.account(named: name), [account.clientID, account.deviceClientID].contains(audience) else {
      // gcloud asks for its own client's on every refresh and goes on without: nothing to say.
      if audience != Self.gcloudClientID { report(GoogleMetadataEndpoint.noIDToken) }
      return .success(nil)
    }
    do {
      let t = try await local.accessToken(
        account: name, scopes: nil, minValid: nil, forceRefresh: false, kind: .idToken, config: config,
        diagnostics: .off, service: service)
      guard IDTokenClaims.audiences(of: t.accessToken).contains(audience) else {
        report(GoogleMetadataEndpoint.noIDToken)
        return .success(nil)
      }
      return .success(t.accessToken)
    } catch {
      let mapped = ErrorMapping.map(error)
      return .failure(failure(mapped.status.rawValue, mapped.message))
    }
  }

  /// gcloud's OAuth client (`googlecloudsdk/core/config.py` CLOUDSDK_CLIENT_ID).
  static let gcloudClientID = "32555940559.apps.googleusercontent.com"

  /// The number of the account's `project` (`GoogleProjectNumber`): configured, cached, or looked
  /// up once for this exec with the account's token (concurrent askers share the lookup; a failed
  /// one is tried again by the next).
  func projectNumber(account name: String, lookup: GoogleProjectNumber) async -> Result<String, EndpointFailure> {
    let task = numberLookup.withLock { running in
      if let running { return running }
      let started = Task { () -> Result<String, EndpointFailure> in
        do {
          return .success(
            try await lookup.number {
              switch await self.token(account: name, scopes: nil) {
              case .success(let t): return t.accessToken
              case .failure(let f): throw f
              }
            })
        } catch let f as EndpointFailure {
          return .failure(f)
        } catch {
          let mapped = ErrorMapping.map(error)
          return .failure(self.failure(mapped.status.rawValue, mapped.message))
        }
      }
      running = started
      return started
    }
    let result = await task.value
    if case .failure = result { numberLookup.withLock { $0 = nil } }
    return result
  }

  /// The token service, built on the first call that needs it.
  private func service() throws -> TokenService {
    try built.withLock { built in
      if let built { return built }
      let service = try build()
      built = service
      return service
    }
  }

  /// The signed-in identity of `account` (Google: the email), from the stored sign-in.
  func identity(account: String) async -> Result<String, EndpointFailure> {
    if let known = identities.withLock({ $0[account] }) { return .success(known) }
    do {
      guard let identity = try await service().status(account: account).identity else {
        let e = ProviderError.signInRequired(account: account, reason: ProviderError.notSignedIn)
        return .failure(failure(ExitStatus.signInRequired.rawValue, e.description))
      }
      identities.withLock { $0[account] = identity }
      return .success(identity)
    } catch {
      let mapped = ErrorMapping.map(error)
      return .failure(failure(mapped.status.rawValue, mapped.message))
    }
  }

  /// The agent's answer, or nil when no agent serves the call (then this process fetches). A
  /// decline (`agent = off`, another config, HOME or D-Bus session) is kept: no later call asks
  /// again. No agent or no answer is not: the next call asks again (an agent restarted meanwhile
  /// serves it, with the shared cache's single-flight refresh).
  private func viaAgent(account: String, scopes: [String]?) async -> Result<EndpointToken, EndpointFailure>? {
    guard let agent, !agentDeclined.withLock({ $0 }) else { return nil }
    var arguments = ["token", "get", account, "--format", "json"]
    for s in scopes ?? [] { arguments += ["--scope", s] }
    let request = AgentRequest.run(
      name: "tokenbroker", arguments: arguments, config: agent.link.config, input: [], bus: agent.link.bus,
      environment: agent.link.environment)
    guard let reply = await agent.ask(request) else { return nil }
    guard reply.exit != AgentProtocol.notServed else {
      agentDeclined.withLock { $0 = true }
      return nil
    }
    guard reply.exit == 0 else {
      let lines = String(decoding: reply.error, as: UTF8.self).split(separator: "\n")
      let line = lines.last { !$0.hasPrefix("tokenbroker: warning") } ?? "the agent could not get a token"
      let message = line.hasPrefix("tokenbroker: ") ? String(line.dropFirst("tokenbroker: ".count)) : String(line)
      return .failure(failure(reply.exit, message))
    }
    struct Doc: Decodable {
      var access_token: String
      var expires_on: Int64
    }
    guard let doc = JSONText.decode(Doc.self, bytes: reply.output) else { return nil }
    return .success(EndpointToken(accessToken: Secret(doc.access_token), expiresOn: doc.expires_on))
  }

  private func failure(_ status: Int32, _ message: String) -> EndpointFailure {
    report(message)
    switch status {
    case ExitStatus.signInRequired.rawValue: return EndpointFailure(kind: .signInRequired, message: message)
    case ExitStatus.providerUnavailable.rawValue: return EndpointFailure(kind: .unavailable, message: message)
    default: return EndpointFailure(kind: .failed, message: message)
    }
  }
}
