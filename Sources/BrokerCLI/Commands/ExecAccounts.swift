import BrokerCore

extension ExecCommand {
  /// The account whose tokens the Azure endpoint serves (an azure account, or a sharepoint
  /// account's `via`), the google account, and the forge account whose CLI's variables COMMAND
  /// gets, from the names given.
  /// - Throws: `UsageError` for two of a kind, an account of another provider, a sharepoint
  ///   account without `via`; `ConfigError` for an unknown account.
  static func accounts(_ names: [String], config: BrokerConfig, usage: String) throws -> (
    azure: String?, google: AccountConfig?, forge: AccountConfig?
  ) {
    var azure: String?
    var google: AccountConfig?
    var forge: AccountConfig?
    for name in names {
      let account = try config.requireAccount(name)
      if account.provider == .github {
        guard forge == nil else { throw UsageError("two github accounts; exec serves one of each kind", usage: usage) }
        forge = account
        continue
      }
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
        throw UsageError("'\(name)' is a \(account.provider.rawValue) account; exec serves azure, sharepoint, google and github accounts", usage: usage)
      }
      guard azure == nil else { throw UsageError("two azure accounts; exec serves one of each kind", usage: usage) }
      azure = served
    }
    return (azure, google, forge)
  }

  /// The variables of the forge's own CLI for `token` (interface.md §2.2): gh takes `GH_TOKEN`
  /// for github.com, and `GH_ENTERPRISE_TOKEN` with `GH_HOST` (the authority's host) for a
  /// GitHub Enterprise Server (gh's manual, "gh help environment").
  static func forgeVariables(_ account: AccountConfig, token: Secret) -> [(String, String)] {
    let host = EndpointURL(account.authority)?.authority.lowercased() ?? "github.com"
    if host == "github.com" { return [("GH_TOKEN", token.revealed)] }
    return [("GH_ENTERPRISE_TOKEN", token.revealed), ("GH_HOST", host)]
  }
}
