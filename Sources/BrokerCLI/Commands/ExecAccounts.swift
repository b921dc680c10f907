import BrokerCore

extension ExecCommand {
  /// The account whose tokens the Azure endpoint serves (an azure account, or a sharepoint
  /// account's `via`) and the google account, from the names given.
  /// - Throws: `UsageError` for two of a kind, an account of another provider, a sharepoint
  ///   account without `via`; `ConfigError` for an unknown account.
  static func accounts(_ names: [String], config: BrokerConfig, usage: String) throws -> (
    azure: String?, google: AccountConfig?
  ) {
    var azure: String?
    var google: AccountConfig?
    for name in names {
      let account = try config.requireAccount(name)
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
        throw UsageError("'\(name)' is a \(account.provider.rawValue) account; exec serves azure, sharepoint and google accounts", usage: usage)
      }
      guard azure == nil else { throw UsageError("two azure accounts; exec serves one of each kind", usage: usage) }
      azure = served
    }
    return (azure, google)
  }
}
