import BrokerCore
import BrokerProviders
import BrokerWire

/// The git credential helper actions (interface.md §4; protocols.md §1).
enum GitHelperCommand {
  static let actions: Set<String> = ["get", "store", "erase", "capability"]

  static func run(action: String, runtime: Runtime) async throws -> ExitStatus {
    let context = runtime.context
    if action == "capability" {
      context.writeOutput("version 0\ncapability authtype\n")
      return .success
    }
    if context.inputIsTerminal {
      context.say(
        "'\(action)' is git's credential helper action: it reads a request (protocol=https, host=HOST, "
          + "each on its own line, then an empty line); to print a token, run 'tokenbroker token get ACCOUNT'")
    }
    guard let input = context.readInput(CredentialCodec.maxMessageBytes) else { throw CredentialCodecError.messageTooLarge }
    let request = try CredentialCodec.decode(input)
    switch action {
    case "get": return try await get(request, runtime: runtime)
    case "erase": return try await erase(request, runtime: runtime)
    default: return .success  // store: the tokens are ours, nothing to keep
    }
  }

  private static func get(_ request: CredentialMessage, runtime: Runtime) async throws -> ExitStatus {
    let target = try GitTarget(request)
    let resolver = try HostResolver(config: runtime.config())
    guard let match = resolver.resolve(host: target.host, path: target.path) else {
      runtime.verbose(
        "no account serves '\(target.place)'; leaving it to the next helper"
          + (target.path == nil && resolver.hasPathGroups(host: target.host)
            ? " (git sent no path, and only [host \(target.host)/PATH] groups serve this host: run 'tokenbroker setup-git', which sets credential.https://\(target.host).useHttpPath)"
            : ""))
      return .success
    }
    runtime.verbose("'\(target.place)' is served by account '\(match.account.name)' (\(match.rule))")
    try target.requireSecureProtocol()
    let challenges = request.values("wwwauth").flatMap(BearerChallenge.parse)
    try await checkTenant(challenges, match: match, target: target, runtime: runtime)
    let claims = challenges.lazy.compactMap(\.claims).first
    let token: IssuedToken
    do {
      token =
        if let claims {
          try await runtime.accessToken(account: match.account.name, scopes: ScopeSet(match.scopes), claims: claims)
        } else {
          try await runtime.accessToken(
            account: match.account.name, scopes: ScopeSet(match.scopes), minValid: nil, forceRefresh: false)
        }
    } catch let error as ProviderError {
      // git would ask the next helper, then the user (its askpass: a password dialog per fetch
      // in an IDE) for a host whose account is not signed in or needs signing in again: `quit=1`
      // stops it (interface.md §4, §8.1). A step-up or a policy refusal of one resource leaves
      // the account signed in, and git's answer as it was. The error's one line goes to stderr.
      if case .signInRequired = error { runtime.context.writeOutput("quit=1\n") }
      throw error
    }
    var reply: [CredentialField] = []
    if request.values("capability").contains("authtype") && takesBearer(challenges, host: target.host) {
      reply = [
        CredentialField("capability[]", "authtype"), CredentialField("authtype", "Bearer"),
        CredentialField("credential", token.accessToken.revealed), CredentialField("ephemeral", "1"),
      ]
    } else {
      let username = match.username ?? token.identity ?? "tokenbroker"
      reply = [CredentialField("username", username), CredentialField("password", token.accessToken.revealed)]
    }
    reply.append(CredentialField("password_expiry_utc", String(token.expiresOn)))
    runtime.context.writeOutput(String(decoding: try CredentialCodec.encode(reply), as: UTF8.self))
    if claims == nil { runtime.answerIsPure() }  // a claims challenge is answered by a new token each time
    return .success
  }

  /// Whether the host takes a bearer token (interface.md §4): one of its `wwwauth[]` challenges
  /// offers `Bearer`, or it is Azure DevOps. Hosts whose challenges offer only `Basic` (GitHub,
  /// GitLab, Gitea, Bitbucket) take the token as a password and refuse `Authorization: Bearer`.
  private static func takesBearer(_ challenges: [BearerChallenge], host: String) -> Bool {
    !challenges.isEmpty || HostResolver.isAzureDevOps(host: host)
  }

  /// `wwwauth[]` naming a tenant (Azure DevOps: `Bearer authorization_uri=…/TENANT`) that is not
  /// the serving azure account's (recorded at sign-in, else its configured GUID): refused, exit
  /// 3, naming the group that would bind the path to an account of that tenant, before any
  /// refresh (a token of the wrong tenant would only be refused again: bug-cases-3.md X13).
  private static func checkTenant(
    _ challenges: [BearerChallenge], match: HostMatch, target: GitTarget, runtime: Runtime
  ) async throws {
    guard match.account.provider == .azure, let wanted = challenges.lazy.compactMap(\.tenant).first else { return }
    let name = match.account.name
    guard let own = try await runtime.tokenService().signedInTenant(account: name), own != wanted else {
      runtime.verbose("the server asks for tenant \(wanted), which is account '\(name)''s (or unknown)")
      return
    }
    let org = target.path.flatMap { $0.split(separator: "/").first }.map(String.init) ?? "ORG"
    // A guest (B2B) of that tenant signs in to it as an account of its own, with the same user.
    let guest = "\(name)-\(org.lowercased())"
    let user = match.account.loginHint.map { "login-hint = \($0)" } ?? "login-hint = YOUR-SIGN-IN-NAME"
    throw HelperError(
      status: .signInRequired,
      description: "\(target.place) wants tenant \(wanted); account '\(name)' is in \(own); bind it with "
        + "[host \(target.host)/\(org)] to an azure account of tenant \(wanted): as a member or guest there, add "
        + "[account \(guest)] with the lines of '\(name)' and tenant = \(wanted), \(user), then "
        + "[host \(target.host)/\(org)] with account = \(guest), and run 'tokenbroker login \(guest)' "
        + "(README: Several organisations on one host)")
  }

  /// Drops the access token git reports as failed, if it is one we handed out; never a refresh
  /// token (bug-cases.md B01, B10).
  ///
  /// With a `path`, only the account that serves that path is asked; without one (a caller that
  /// sends `path` to `get` but not to `erase`, as VFS for Git did: bug-cases-3.md X13), every
  /// account that serves the host under some path: the token itself says which one handed it out.
  /// A dropped token is named on stderr with the way to bind another account to the repository's
  /// path, since git gives up after this erase and another tenant's organisation on the same
  /// host looks just like it.
  private static func erase(_ request: CredentialMessage, runtime: Runtime) async throws -> ExitStatus {
    guard let target = try? GitTarget(request),
      let failed = request.value("password") ?? request.value("credential"), !failed.isEmpty
    else { return .success }
    let resolver = try HostResolver(config: runtime.config())
    let candidates =
      target.path == nil
      ? resolver.accounts(servingHost: target.host)
      : resolver.resolve(host: target.host, path: target.path).map { [$0.account] } ?? []
    for account in candidates {
      guard try await runtime.eraseHandedOut(account: account.name, token: Secret(failed)) else { continue }
      runtime.verbose("dropped the rejected access token of '\(account.name)'")
      let org = target.path.flatMap { $0.split(separator: "/").first }.map(String.init) ?? "ORG"
      runtime.context.say(
        "\(target.place) refused the token of account '\(account.name)', which is dropped (the next request gets a new one); "
          + "if this repository belongs to another account or tenant, bind it with [host \(target.host)/\(org)] "
          + "(README: Several organisations on one host)")
      return .success
    }
    runtime.verbose("erase matched no token of ours")
    return .success
  }
}

/// The `protocol` and `host` a request is about, checked against its `url` if one is given.
struct GitTarget {
  var proto: String
  var host: String
  /// git's `path` (sent with `credential.useHttpPath`): the URL's path without its leading `/`,
  /// or nil when the request has none (an empty one counts as none).
  var path: String?

  /// `HOST` or `HOST/PATH`, for messages.
  var place: String { path.map { host + "/" + $0 } ?? host }

  /// - Throws: `HelperError` when `protocol` or `host` is missing or empty (never a wildcard,
  ///   CVE-2020-11008) or the `url` disagrees.
  init(_ request: CredentialMessage) throws {
    var proto = request.value("protocol")
    var host = request.value("host")
    if let url = request.value("url") {
      guard let parsed = GitTarget.parse(url: url) else { throw HelperError.badURL }
      if proto != nil && proto != parsed.0 || host != nil && host?.lowercased() != parsed.1.lowercased() {
        throw HelperError.badURL
      }
      proto = parsed.0
      host = parsed.1
    }
    guard let proto, !proto.isEmpty else { throw HelperError.missing("protocol") }
    guard let host, !host.isEmpty else { throw HelperError.missing("host") }
    self.proto = proto.lowercased()
    self.host = host.lowercased()
    var path = Substring(request.value("path") ?? "")
    while path.first == "/" { path.removeFirst() }
    self.path = path.isEmpty ? nil : String(path)
  }

  /// `https` always; `http` only to a loopback host (interface.md §4).
  func requireSecureProtocol() throws {
    let name = HostResolverName.stripPort(host)
    if proto == "https" || (proto == "http" && EndpointURL.isLoopbackHost(name)) { return }
    throw HelperError.insecureProtocol(proto, host: host)
  }

  /// Scheme and `host[:port]` of `url`, percent-decoded; nil when either is empty or any decoded
  /// part of the URL holds a control character (CVE-2020-5260).
  static func parse(url: String) -> (String, String)? {
    guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
    let scheme = String(url[..<colon])
    var rest = url[url.index(colon, offsetBy: 3)...]
    // Every decoded component, path and query included, must be free of control characters.
    guard let whole = percentDecode(String(rest)), !whole.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
    else { return nil }
    if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
    if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
    guard let host = percentDecode(String(rest)), !scheme.isEmpty, !host.isEmpty,
      !host.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "/" })
    else { return nil }
    return (scheme.lowercased(), host)
  }

  static func percentDecode(_ s: String) -> String? {
    var bytes: [UInt8] = []
    var it = Array(s.utf8)[...]
    while let b = it.popFirst() {
      if b == UInt8(ascii: "%") {
        guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else { return nil }
        bytes.append(v)
        it = it.dropFirst(2)
      } else {
        bytes.append(b)
      }
    }
    return String(validating: bytes, as: UTF8.self)
  }
}

enum HostResolverName {
  static func stripPort(_ host: String) -> String {
    if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
      return String(host[host.index(after: host.startIndex)..<close])
    }
    if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon { return String(host[..<colon]) }
    return host
  }
}
