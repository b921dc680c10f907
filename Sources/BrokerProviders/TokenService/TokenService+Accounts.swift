import BrokerCore

extension TokenService {
  /// `logout` (interface.md §3): deletes every item of `account` (refresh token, access tokens,
  /// cookies) and nothing of any other account, and records it `signed-out` (interface.md §8.1). Works for an account no longer in the config as
  /// long as it has items.
  /// - Returns: how many items were deleted.
  /// - Throws: `ConfigError.unknownAccount` when the account is neither configured nor stored;
  ///   `StoreError`.
  public func logout(account name: String) async throws -> Int {
    let keys = try await store.keys(account: name).filter { $0.account == name }
    if keys.isEmpty, config.account(named: name) == nil { throw config.unknownAccount(name) }
    for key in keys { try await store.delete(key) }
    refreshLock.setHold(nil, account: name)
    recordSignedOut(account: name)
    return keys.count
  }

  /// git `erase` (interface.md §4, bug-cases.md B10): deletes the access-token item of `account` holding exactly
  /// `token`, never a refresh token and never another token.
  /// - Returns: whether a cached token matched.
  /// - Throws: `StoreError`.
  public func eraseHandedOut(account name: String, token: Secret) async throws -> Bool {
    guard !token.isEmpty else { return false }
    if let sp = config.account(named: name), sp.provider == .sharepoint {
      return try await eraseSharePoint(sp, token: token)
    }
    var matched = false
    for key in try await store.keys(account: name) where key.account == name && key.kind == .accessToken {
      guard let secret = try await store.load(key),
        let record = try? AccessTokenRecord.decode(secret, item: key.description),
        record.accessToken == token
      else { continue }
      try await store.delete(key)
      matched = true
    }
    return matched
  }

  /// One line of `accounts`: signed in or not, identity, expiry of the cached access token.
  /// - Throws: `ConfigError.unknownAccount`; `StoreError` (a locked keyring is not "signed out").
  public func status(account name: String) async throws -> AccountStatus {
    let account = try config.requireAccount(name)
    let record = try await loadRefreshRecord(name)
    var expiry = try await loadAccessRecord(name, ScopeSet(account.scopes))?.expiresOn
    if expiry == nil {
      for key in try await store.keys(account: name) where key.account == name && key.kind == .accessToken {
        guard let secret = try await store.load(key),
          let r = try? AccessTokenRecord.decode(secret, item: key.description)
        else { continue }
        expiry = max(expiry ?? r.expiresOn, r.expiresOn)
      }
    }
    return AccountStatus(account: account, signedIn: record != nil, identity: record?.identity, accessTokenExpiry: expiry)
  }
}
