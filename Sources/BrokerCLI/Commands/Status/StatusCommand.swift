import BrokerCore
import BrokerProviders

/// `tokenbroker status [ACCOUNT] [--json]` and `tokenbroker status --url URL [--json]`
/// (interface.md §3): what a user asks when something is off. Per account: provider, identity,
/// tenant, when the refresh token was obtained, the access tokens held (scopes, time left); the
/// store (and whether it is locked or reachable) and whether the agent runs; for a URL, the rule
/// and account that serve it, the token `get` would hand out (expiry only) and the other git
/// credential helpers for that URL (`StatusURL`). Never a secret; nothing is refreshed.
///
/// Exit 0, or 3 when the named account (or the URL's account) is not signed in. `--json` prints
/// one object, its shape in tokenbroker(1).
enum StatusCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let a = try Arguments(args, command: "status")
    let positionals = try a.positionals.count <= 1 ? a.positionals : a.expectPositionals(["ACCOUNT"])
    let config = try runtime.config()
    var report = StatusReport()
    var named: AccountConfig?
    if let url = a.value("url") {
      guard positionals.isEmpty else { throw UsageError("give ACCOUNT or --url, not both", usage: Help.usage("status")) }
      let served = try await StatusURL.resolve(url, config: config, runtime: runtime)
      report.url = served.report
      named = served.account
    } else if let name = positionals.first {
      named = try config.requireAccount(name)
    }
    let accounts = named.map { [$0] } ?? config.accounts
    report.agent = await agentState(runtime)
    report.store = StatusReport.Store(kind: config.settings.store.rawValue, state: "available", detail: nil)
    let service = try runtime.tokenService()
    let now = SystemTime().now
    for account in accounts {
      do {
        report.accounts.append(StatusReport.Account(try await service.details(account: account.name), now: now))
      } catch let e as StoreError {
        report.store.state = e.isLocked ? "locked" : e.isMissing ? "missing" : "unreachable"
        report.store.detail = e.description
        report.accounts.append(StatusReport.Account(unknown: account))
      }
    }
    if report.url?.account != nil, let account = report.accounts.first {
      switch account.signed_in {
      case true?: report.url?.attach(account, margin: config.settings.refreshMargin, now: now)
      case false?: report.url?.token = "sign-in"
      case nil: report.url?.token = nil
      }
    }
    runtime.context.writeOutput(a.flag("json") ? JSONText.encode(report) + "\n" : report.text(now: now))
    return named != nil && report.accounts.first?.signed_in == false ? .signInRequired : .success
  }

  private static func agentState(_ runtime: Runtime) async -> StatusReport.Agent {
    let endpoint = AgentCommand.endpoint(runtime)
    let reply = await AgentCommand.ask(.status, endpoint)
    return StatusReport.Agent(running: reply != nil, pid: reply?.pid, socket: endpoint.socketPath)
  }
}

extension StoreError {
  /// The encrypted store's file is not there yet (the word `accounts` uses too).
  var isMissing: Bool {
    if case .encryptedMissing = self { return true }
    return false
  }

  /// A keyring or encrypted store that is there but locked (not unreachable).
  var isLocked: Bool {
    switch self {
    case .locked, .encryptedLocked, .unlockDismissed, .unlockUnanswered, .itemsWithheld: return true
    default: return false
    }
  }
}
