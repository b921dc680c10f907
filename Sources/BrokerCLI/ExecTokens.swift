import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerSystem
import BrokerWire
import Glibc
import Synchronization

/// Where `tokenbroker exec`'s endpoints take tokens from (interface.md §9): the running agent,
/// asked exactly as `token get ACCOUNT --scope S --format json` through the front asks it, so
/// every process shares its cache and single-flight refresh; when no agent serves the call (none
/// runs, `agent = off`, another config), this process's own `TokenCache` in front of the token
/// service, so concurrent SDK calls of this COMMAND still cause one refresh.
final class ExecTokens: Sendable {
  /// How to reach the agent: its socket, the explicit config (absolute, or ""), the D-Bus address.
  struct AgentLink: Sendable {
    var socket: String
    var config: String
    var bus: String
  }

  let service: TokenService
  let local: SharedTokenSource
  let agent: AgentLink?
  /// Writes a failure's line to tokenbroker's stderr, once per distinct message.
  let report: @Sendable (String) -> Void
  private let identities = Mutex<[String: String]>([:])

  /// How long a connected agent may take to answer, in ms (as the front allows).
  static let replyBound = 180_000

  init(service: TokenService, agent: AgentLink?, report: @escaping @Sendable (String) -> Void) {
    self.service = service
    self.local = SharedTokenSource(cache: TokenCache(time: SystemTime()))
    self.agent = agent
    self.report = report
  }

  /// A token of `account` for `scopes` (nil: the account's), as `token get` would hand it out.
  func token(account: String, scopes: [String]?) async -> Result<EndpointToken, EndpointFailure> {
    if let agent, let answer = await viaAgent(agent, account: account, scopes: scopes) { return answer }
    do {
      let service = self.service
      let t = try await local.accessToken(
        account: account, scopes: scopes.map { ScopeSet($0) }, minValid: nil, forceRefresh: false,
        config: service.config, diagnostics: .off, service: { service })
      if let identity = t.identity { identities.withLock { $0[account] = identity } }
      return .success(EndpointToken(accessToken: t.accessToken, expiresOn: t.expiresOn))
    } catch {
      let mapped = ErrorMapping.map(error)
      return .failure(failure(mapped.status.rawValue, mapped.message))
    }
  }

  /// The signed-in identity of `account` (Google: the email), from the stored sign-in.
  func identity(account: String) async -> Result<String, EndpointFailure> {
    if let known = identities.withLock({ $0[account] }) { return .success(known) }
    do {
      guard let identity = try await service.status(account: account).identity else {
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

  /// The agent's answer, or nil when no agent serves the call (then this process fetches).
  private func viaAgent(_ link: AgentLink, account: String, scopes: [String]?) async -> Result<
    EndpointToken, EndpointFailure
  >? {
    var arguments = ["token", "get", account, "--format", "json"]
    for s in scopes ?? [] { arguments += ["--scope", s] }
    let request = AgentRequest.run(name: "tokenbroker", arguments: arguments, config: link.config, input: [], bus: link.bus)
    guard
      let reply = try? await DedicatedThread.run({
        AgentClient.send(request, to: link.socket, timeoutMilliseconds: Self.replyBound)
      }), reply.exit != AgentProtocol.notServed
    else { return nil }
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
