import BrokerCore
import BrokerProviders

/// `tokenbroker accounts [--json]`: one line per configured account: name, provider, signed in or
/// not, identity, access-token expiry (Unix seconds in JSON, RFC 3339 in text). `--names` prints
/// only the configured names, one per line, without opening the keyring (for shell completion).
enum AccountsCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let a = try Arguments(args, command: "accounts")
    _ = try a.expectPositionals([])
    if a.flag("names") {
      for account in try runtime.config().accounts { runtime.context.writeOutput(account.name + "\n") }
      return .success
    }
    let service = try runtime.tokenService()
    var rows: [AccountStatus] = []
    do {
      for account in try runtime.config().accounts { rows.append(try await service.status(account: account.name)) }
    } catch let error as StoreError {
      guard let state = encryptedState(error) else { throw error }
      try showStore(state, runtime: runtime, json: a.flag("json"))
      throw error
    }
    if a.flag("json") {
      struct Row: Encodable {
        var name, provider: String
        var signed_in: Bool
        var identity: String?
        var access_token_expires_on: Int64?
      }
      let doc = rows.map {
        Row(
          name: $0.account.name, provider: $0.account.provider.rawValue, signed_in: $0.signedIn, identity: $0.identity,
          access_token_expires_on: $0.accessTokenExpiry)
      }
      runtime.context.writeOutput(JSONText.encode(doc) + "\n")
    } else {
      if rows.isEmpty {
        runtime.context.say(
          "no accounts in the config (\(runtime.paths.userConfigFile)); add one with 'tokenbroker account add NAME --provider P ...' (see 'tokenbroker account --help')")
      }
      for r in rows {
        var line = "\(r.account.name)\t\(r.account.provider.rawValue)\t\(r.signedIn ? "signed in" : "not signed in")"
        if let id = r.identity { line += "\t\(TerminalText.clean(id))" }
        if let e = r.accessTokenExpiry { line += "\taccess token until \(RFC3339.utc(e))" }
        runtime.context.writeOutput(line + "\n")
      }
    }
    return .success
  }

  /// `store = encrypted-file`, and the caller's store cannot be read: `locked` (no key held for
  /// it), `missing` (no file at the caller's path), or, when the agent serves another path, which
  /// of the two the caller's own file is (bug-cases-3.md X17). Nil for other errors.
  static func encryptedState(_ error: StoreError) -> String? {
    switch error {
    case .encryptedLocked: return "locked"
    case .encryptedMissing: return "missing"
    case .agentServesAnotherStore(let path, _, _): return AgentHeldStore.exists(path) ? "locked" : "missing"
    default: return nil
    }
  }

  /// The accounts as configured with the store's `state` (not the accounts as signed out); the
  /// caller then exits 5 with the error, which names the path and what to run.
  static func showStore(_ state: String, runtime: Runtime, json: Bool) throws {
    let accounts = try runtime.config().accounts
    if json {
      struct Row: Encodable { var name, provider, store: String }
      runtime.context.writeOutput(JSONText.encode(accounts.map { Row(name: $0.name, provider: $0.provider.rawValue, store: state) }) + "\n")
    } else {
      for account in accounts { runtime.context.writeOutput("\(account.name)\t\(account.provider.rawValue)\tstore \(state)\n") }
    }
  }
}
