import BrokerCore

/// One access token an account holds in the store: what `status` shows (never the token) and what
/// `logout` asks git's other helpers to forget.
public struct HeldAccessToken: Sendable {
  /// The scope set it was requested for, sorted.
  public var scopes: [String]
  /// Unix seconds.
  public var expiresOn: Int64
  /// The token itself (redacted in descriptions); never printed by `status`.
  public var accessToken: Secret
}

/// What the store says of one account (`tokenbroker status`, interface.md §3).
public struct AccountDetails: Sendable {
  public var account: AccountConfig
  /// A refresh token is stored.
  public var signedIn: Bool
  /// The account's state (interface.md §8.1): `signed-in` exactly when `signedIn`.
  public var state: AccountState
  /// The signed-in identity, or nil.
  public var identity: String?
  /// The tenant id recorded at sign-in (Azure `tid`), or nil.
  public var tenant: String?
  /// Unix seconds when the stored refresh token was obtained, or nil.
  public var refreshTokenObtainedAt: Int64?
  /// Unix seconds when the provider said the refresh token expires, or nil (unstated or none).
  public var refreshTokenExpiresOn: Int64?
  /// The cached access tokens, soonest expiry first.
  public var accessTokens: [HeldAccessToken]
}

extension TokenService {
  /// The account's stored state: sign-in record and cached access tokens (unreadable access-token
  /// items are skipped: they are only a cache).
  /// - Throws: `ConfigError.unknownAccount`; `StoreError` (a locked or unreachable store is never
  ///   reported as "not signed in").
  public func details(account name: String) async throws -> AccountDetails {
    let account = try config.requireAccount(name)
    let record = try await loadRefreshRecord(name)
    var held: [HeldAccessToken] = []
    for key in try await store.keys(account: name) where key.account == name && key.kind == .accessToken {
      guard let secret = try await store.load(key), let r = try? AccessTokenRecord.decode(secret, item: key.description)
      else { continue }
      held.append(HeldAccessToken(scopes: r.scopes.sorted(), expiresOn: r.expiresOn, accessToken: r.accessToken))
    }
    held.sort { $0.expiresOn < $1.expiresOn }
    let state =
      record != nil
      ? AccountState.signedIn : AccountState.withoutRefreshToken(recorded: accountStates.recorded(account: name), now: time.now)
    return AccountDetails(
      account: account, signedIn: record != nil, state: state, identity: record?.identity, tenant: record?.tenant,
      refreshTokenObtainedAt: record?.obtainedAt, refreshTokenExpiresOn: record?.expiresOn, accessTokens: held)
  }

  /// The identity `account` signed in as (`preferred_username`, else `email`, else `oid`/`sub`,
  /// recorded with the refresh token), or nil when it is not signed in. Reads the refresh-token
  /// record alone, none of the access tokens (`details` reads them all).
  /// - Throws: `ConfigError.unknownAccount`; `StoreError` (a locked store is never "not signed in").
  public func signedInIdentity(account name: String) async throws -> String? {
    _ = try config.requireAccount(name)
    return try await loadRefreshRecord(name)?.identity
  }

  /// The tenant `account` signed in to (Azure `tid`, recorded at sign-in), else its configured
  /// `tenant` when that is a GUID, else nil (not an azure account, or nothing to tell).
  /// - Throws: `ConfigError.unknownAccount`; `StoreError`.
  public func signedInTenant(account name: String) async throws -> String? {
    let account = try config.requireAccount(name)
    guard account.provider == .azure else { return nil }
    if let tid = try await loadRefreshRecord(name)?.tenant, !tid.isEmpty { return tid.lowercased() }
    return TenantID.isGUID(account.tenant) ? account.tenant.lowercased() : nil
  }
}

/// Azure tenant ids.
public enum TenantID {
  /// Whether `s` is a GUID (`8-4-4-4-12` hex digits), as tenant ids are.
  public static func isGUID(_ s: String) -> Bool {
    let parts = s.split(separator: "-", omittingEmptySubsequences: false)
    return parts.map(\.count) == [8, 4, 4, 4, 12] && parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
  }
}
