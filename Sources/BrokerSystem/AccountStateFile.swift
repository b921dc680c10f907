import BrokerCore

/// `AccountStates` over `account-ACCOUNT.state` files in the runtime directory, beside the
/// account's refresh lock (interface.md §8.1), one `KeyValueFile` each: `state=` (the names of
/// `AccountState.name`), and as the state has them `since=` and `until=` (Unix seconds),
/// `reason=` (`SignInReason`), `detail=` (what the provider said) and `identity=` (who was signed
/// in). Every process of the user
/// reads and writes the same files, the agent's and those without one.
public struct AccountStateFile: AccountStates {
  let directory: String

  /// - Parameter directory: the runtime directory, already made safe (`RuntimeDirectory.ensure`).
  public init(runtimeDirectory directory: String) {
    self.directory = directory
  }

  func path(_ account: String) -> String { LockFiles.path(directory, prefix: "account-", account: account, suffix: ".state") }

  public func recorded(account: String) -> AccountState? {
    KeyValueFile.read(path(account)).flatMap(Self.decode)
  }

  public func record(_ state: AccountState, account: String) {
    KeyValueFile.write(Self.encode(state), to: path(account))
  }

  static func encode(_ state: AccountState) -> [(String, String)] {
    var fields = [("state", state.name)]
    switch state {
    case .signedIn: break
    case .signedOut(let since): if let since { fields.append(("since", String(since))) }
    case .signInNeeded(let need), .signInPending(let need), .cooldown(let need, _):
      if let since = need.since { fields.append(("since", String(since))) }
      fields.append(("reason", need.reason.rawValue))
      if let detail = need.detail { fields.append(("detail", detail)) }
      if let identity = need.identity { fields.append(("identity", identity)) }
    }
    if case .cooldown(_, let until) = state { fields.append(("until", String(until))) }
    return fields
  }

  /// The state in `fields`, or nil when they are not one (an unknown state or reason, a cooldown
  /// without its end).
  static func decode(_ fields: [String: String]) -> AccountState? {
    let since = fields["since"].flatMap { Int64($0) }
    let need = fields["reason"].flatMap(SignInReason.init(rawValue:)).map {
      SignInNeed(
        since: since, reason: $0, detail: fields["detail"].flatMap { $0.isEmpty ? nil : $0 },
        identity: fields["identity"].flatMap { $0.isEmpty ? nil : $0 })
    }
    switch fields["state"] {
    case "signed-in": return .signedIn
    case "signed-out": return .signedOut(since: since)
    case "sign-in-needed": return need.map { .signInNeeded($0) }
    case "sign-in-pending": return need.map { .signInPending($0) }
    case "cooldown":
      guard let need, let until = fields["until"].flatMap({ Int64($0) }) else { return nil }
      return .cooldown(need, until: until)
    default: return nil
    }
  }
}
