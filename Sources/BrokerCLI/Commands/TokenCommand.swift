import BrokerCore
import BrokerWire
import BrokerProviders

/// `tokenbroker token get ACCOUNT [--scope S]... [--min-valid SECONDS] [--force-refresh] [--format F]`:
/// prints a valid credential, refreshing silently; never interactive (interface.md §3).
enum TokenCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let usage = Help.usage("token")
    guard args.first == "get" else {
      throw UsageError(args.first.map { "unknown subcommand 'token \($0)'" } ?? "missing subcommand (get)", usage: usage)
    }
    let a = try Arguments(Array(args.dropFirst()), command: "token", subcommand: "get")
    let account = try a.expectPositionals(["ACCOUNT"])[0]
    if a.flag("json"), let other = a.value("format"), other != "json" {
      throw UsageError("--json is --format json; it cannot go with --format \(other)", usage: usage)
    }
    let formatName = a.flag("json") ? "json" : (a.value("format") ?? "token")
    guard let format = TokenFormat(rawValue: formatName) else {
      throw UsageError("unknown format '\(formatName)' (\(CommandTable.formats.joined(separator: ", ")))", usage: usage)
    }
    if let account = try runtime.config().account(named: account), account.provider == .sharepoint, account.mode != .bearer {
      let cookies = try await runtime.tokenService().cookies(account: account.name, forceRefresh: a.flag("force-refresh"))
      if let warning = cookies.warning { runtime.context.say("warning: " + warning) }
      runtime.context.writeOutput(try CookieFormat.render(format, cookies, usage: usage))
      return .success
    }
    if format == .cookiejar {
      throw UsageError("'\(account)' hands out bearer tokens; --format cookiejar is for cookie accounts", usage: usage)
    }
    // Checked before any token is fetched: a version kubectl would refuse is not worth a refresh.
    let execVersion = format == .execCredential ? try ExecCredentialVersion(environment: runtime.context.environment) : .v1
    let scopes = a.values("scope").flatMap(ScopeSet.split)
    // kube-token = id: kube-apiserver's OIDC authenticator validates the ID token, not the access token.
    let kubeID = try format == .execCredential && runtime.config().account(named: account)?.kubeToken == .id
    let requested = scopes.isEmpty ? nil : ScopeSet(scopes)
    // --claims: a claims challenge a script got from a resource (base64 or JSON), as in wwwauth[].
    let claims = try a.value("claims").map { value in
      guard let json = BearerChallenge(parameters: ["error": "insufficient_claims", "claims": value]).claims else {
        throw UsageError("--claims must be a JSON object or its base64 (the claims of an insufficient_claims challenge)", usage: usage)
      }
      return json
    }
    let token =
      if let claims {
        try await runtime.accessToken(account: account, scopes: requested, claims: claims)
      } else {
        try await runtime.accessToken(
          account: account, scopes: requested, minValid: try a.seconds("min-valid"), forceRefresh: a.flag("force-refresh"),
          kind: kubeID ? .idToken : .accessToken)
      }
    runtime.context.writeOutput(format.render(token, execCredential: execVersion))
    // A lifetime the provider does not issue cannot be met by refreshing: say so, every time.
    let left = token.expiresOn - SystemTime().now
    if let minValid = try a.seconds("min-valid"), claims == nil, left < Int64(minValid) {
      runtime.context.say(
        "warning: the provider issued a token valid for \(max(0, left)) s, less than --min-valid \(minValid); it issues no longer ones")
      return .success
    }
    if claims == nil { runtime.answerIsPure() }  // absolute times only (expires_on, expirationTimestamp)
    return .success
  }
}
