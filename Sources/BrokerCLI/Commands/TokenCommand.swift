import BrokerCore
import BrokerWire
import BrokerProviders

/// `tokenbroker token get ACCOUNT [--scope S]... [--for imap|pop|smtp] [--min-valid SECONDS]
/// [--force-refresh] [--format F] [--user U] [--host H] [--port P]`: prints a valid credential,
/// refreshing silently; never interactive (interface.md §3). `--for` asks the mail scopes of the
/// protocol (`MailScopes`; README, "Mail clients"), `--format xoauth2 | oauthbearer` prints the
/// SASL string (`SASLFormat`) for `--user` (default: the account's identity), `--host` and `--port`.
/// `--wait SECONDS` waits that long for an account that needs signing in (interface.md §8.1).
enum TokenCommand {
  /// `fetch`'s token; with `seconds`, an account that needs signing in is said so on stderr (one
  /// line), and waited for up to `seconds` (the account's recorded state, read four times a second,
  /// turns `signed-in` when a sign-in anywhere stored its refresh token), then fetched again.
  /// - Throws: what `fetch` throws; the first "sign-in needed" when the time runs out.
  static func waitingForSignIn(
    account: String, seconds: Int?, runtime: Runtime, _ fetch: () async throws -> IssuedToken
  ) async throws -> IssuedToken {
    do {
      return try await fetch()
    } catch ProviderError.signInRequired(let name, let reason) where (seconds ?? 0) > 0 && name == account {
      let error = ProviderError.signInRequired(account: name, reason: reason)
      let seconds = seconds ?? 0
      runtime.context.say("\(error.description); waiting up to \(seconds) s (--wait) for the sign-in")
      let states = try runtime.services().accountStates()
      let deadline = MonotonicClock.seconds + Double(seconds)
      while MonotonicClock.seconds < deadline {
        try await Task.sleep(for: .milliseconds(250))
        if states.recorded(account: name) == .signedIn { return try await fetch() }
      }
      throw error
    }
  }

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
    let mail = try a.value("for").map { name in
      guard let p = MailProtocol(rawValue: name) else {
        throw UsageError("unknown protocol '\(name)' for --for (imap, pop or smtp)", usage: usage)
      }
      return p
    }
    if mail != nil, !a.values("scope").isEmpty {
      throw UsageError("--for chooses the scopes of the mail token; it cannot go with --scope", usage: usage)
    }
    let sasl = SASLFormat.Mechanism(rawValue: format.rawValue)
    if sasl == nil, let option = ["user", "host", "port"].first(where: { a.value($0) != nil }) {
      throw UsageError("--\(option) is for --format xoauth2 or oauthbearer", usage: usage)
    }
    if sasl == .xoauth2, let option = ["host", "port"].first(where: { a.value($0) != nil }) {
      throw UsageError("--\(option) is for --format oauthbearer (XOAUTH2 carries no \(option))", usage: usage)
    }
    let port = try a.value("port").map { text in
      guard let n = Int(text), (1...65535).contains(n) else { throw UsageError("--port must be a port number, 1 to 65535", usage: usage) }
      return n
    }
    if let mail {
      return try await mailToken(account: account, for: mail, args: a, format: format, port: port, runtime: runtime)
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
        try await waitingForSignIn(account: account, seconds: try a.seconds("wait"), runtime: runtime) {
          try await runtime.accessToken(
            account: account, scopes: requested, minValid: try a.seconds("min-valid"), forceRefresh: a.flag("force-refresh"),
            kind: kubeID ? .idToken : .accessToken)
        }
      }
    try write(token, format: format, execCredential: execVersion, args: a, port: port, runtime: runtime)
    // A lifetime the provider does not issue cannot be met by refreshing: say so, every time.
    if claims == nil, try warnIfShort(token, args: a, runtime: runtime) { return .success }
    if claims == nil { runtime.answerIsPure() }  // absolute times only (expires_on, expirationTimestamp)
    return .success
  }

  /// `--for P`: the mail token, its scopes from `MailScopes`. A refusal that consent would cure
  /// exits 3 naming the scopes and how to get them: for azure `.stepUpRequired` (`consent_required`,
  /// `interaction_required`; Entra's AADSTS65001 comes as `invalid_grant` with suberror
  /// `consent_required`), for google and oidc also `invalid_scope` (Google's answer, and RFC 6749
  /// §6's, to a refresh asking a scope its sign-in did not grant; Entra's `invalid_scope`,
  /// AADSTS70011, is a malformed request and stays the configuration error it is). The line says:
  /// `mail = …` in the account (so every protocol shares the token), then for azure `tokenbroker
  /// login ACCOUNT --scope S…`, whose sign-in asks consent for them and whose refresh token
  /// (Entra's serve every consented resource) serves the account's own scopes as well; for google
  /// and oidc the scopes go into the account's `scopes` before `tokenbroker login ACCOUNT`, since
  /// their refresh token carries only the scopes of its own sign-in.
  private static func mailToken(
    account name: String, for mail: MailProtocol, args a: Arguments, format: TokenFormat, port: Int?, runtime: Runtime
  ) async throws -> ExitStatus {
    let usage = Help.usage("token")
    if format == .cookiejar { throw UsageError("--for hands out bearer tokens; --format cookiejar is for cookie accounts", usage: usage) }
    if format == .execCredential { throw UsageError("--for is for mail clients; --format exec-credential is kubectl's", usage: usage) }
    let account = try runtime.config().requireAccount(name)
    let scopes = try MailScopes.scopes(for: mail, account: account)
    let token: IssuedToken
    do {
      token = try await runtime.accessToken(
        account: name, scopes: scopes, minValid: try a.seconds("min-valid"), forceRefresh: a.flag("force-refresh"), kind: .accessToken)
    } catch let e as ProviderError {
      let reason: String
      switch e {
      case .stepUpRequired(_, let why, _, _): reason = why
      case .rejected(_, "invalid_scope", let detail) where account.provider != .azure: reason = "invalid_scope: " + detail
      default: throw e
      }
      let keyed = account.mail.contains(mail)
      let wanted = (account.mail + (keyed ? [] : [mail])).map(\.rawValue)
      let missing = scopes.items.filter { !account.scopes.contains($0) }
      var steps: [String] = keyed ? [] : ["add 'mail = \(wanted.joined(separator: " "))' to [account \(name)]"]
      let login: String
      if account.provider == .azure {
        login = "tokenbroker login \(name)" + scopes.items.map { " --scope " + $0 }.joined()
      } else {
        if !missing.isEmpty { steps.append("add \(missing.joined(separator: " ")) to its scopes") }
        login = "tokenbroker login \(name)"
      }
      throw HelperError(
        status: .signInRequired,
        description: "'\(name)' has no consent for \(scopes.items.joined(separator: " ")) (\(reason)); "
          + steps.map { $0 + ", then " }.joined() + "run '\(login)' to consent")
    }
    try write(token, format: format, execCredential: .v1, args: a, port: port, runtime: runtime)
    if try !warnIfShort(token, args: a, runtime: runtime) { runtime.answerIsPure() }
    return .success
  }

  /// Prints `token` as `format`; the SASL formats for `--user` (default: the token's identity).
  /// - Throws: `UsageError` when a SASL format has no user name to carry.
  private static func write(
    _ token: IssuedToken, format: TokenFormat, execCredential: ExecCredentialVersion, args a: Arguments, port: Int?,
    runtime: Runtime
  ) throws {
    guard let sasl = SASLFormat.Mechanism(rawValue: format.rawValue) else {
      runtime.context.writeOutput(format.render(token, execCredential: execCredential))
      return
    }
    guard let user = a.value("user") ?? token.identity else {
      throw UsageError("the sign-in of '\(token.account)' names no user; pass --user with the mailbox's address", usage: Help.usage("token"))
    }
    runtime.context.writeOutput(
      SASLFormat.render(sasl, token: token.accessToken.revealed, user: user, host: a.value("host"), port: port))
  }

  /// Warns when `token` expires sooner than `--min-valid` (the provider issues no longer ones);
  /// true when it did.
  private static func warnIfShort(_ token: IssuedToken, args a: Arguments, runtime: Runtime) throws -> Bool {
    let left = token.expiresOn - SystemTime().now
    guard let minValid = try a.seconds("min-valid"), left < Int64(minValid) else { return false }
    runtime.context.say(
      "warning: the provider issued a token valid for \(max(0, left)) s, less than --min-valid \(minValid); it issues no longer ones")
    return true
  }
}
