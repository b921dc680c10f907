import BrokerCore

/// The token policy of interface.md §3 and §6 over a provider and a store: cached access tokens,
/// silent refresh with rotation, sign-in, sign-out.
///
/// Stateless: every call reads the store. Refreshes of one account take turns under `refreshLock`
/// (across processes, too); the agent's single flight is what makes many callers of one process
/// share a refresh without even waiting for the lock (interface.md §8).
public struct TokenService: Sendable {
  /// The validated configuration the service works from.
  public let config: BrokerConfig
  let store: any SecretStore
  let time: any TimeSource
  let warn: @Sendable (String) -> Void
  let makeProvider: @Sendable (AccountConfig) throws -> any OAuthProvider
  /// For requests that are not a provider's (SharePoint cookie exchange and checks); nil in tests
  /// that need none.
  let transport: (any HTTPTransport)?
  /// Held around each account's "re-read, refresh, store".
  let refreshLock: any RefreshLock
  /// What each account needs of its user when it is not signed in (interface.md §8.1).
  let accountStates: any AccountStates
  /// `--verbose` lines: cache hits and misses, why a refresh or deletion happens.
  public let diagnostics: Diagnostics

  /// - Parameter warn: receives one-line warnings (never a secret), e.g. an access token that could
  ///   not be cached.
  ///   `refreshLock`: serialises refreshes of one account across processes (`RefreshLockFile`).
  ///   `accountStates`: where each account's state is kept (`AccountStateFile`).
  ///   `discoveryCache`: discovery documents of `oidc` accounts (memory, then disk).
  public init(
    config: BrokerConfig, store: any SecretStore, transport: any HTTPTransport, time: any TimeSource,
    refreshLock: any RefreshLock = NoRefreshLock(), accountStates: any AccountStates = MemoryAccountStates(),
    diagnostics: Diagnostics = .off, discoveryCache: any DiscoveryCache = MemoryDiscoveryCache.shared,
    warn: @escaping @Sendable (String) -> Void
  ) {
    let settings = config.settings
    self.init(
      config: config, store: store, time: time, warn: warn, transport: transport, refreshLock: refreshLock,
      accountStates: accountStates, diagnostics: diagnostics,
      makeProvider: {
        try Providers.make(for: $0, settings: settings, transport: transport, time: time, discoveryCache: discoveryCache)
      })
  }

  /// With the caller's provider factory (tests; later a registry that reuses providers). The
  /// factory throws what `Providers.make` throws.
  public init(
    config: BrokerConfig, store: any SecretStore, time: any TimeSource, warn: @escaping @Sendable (String) -> Void,
    transport: (any HTTPTransport)? = nil, refreshLock: any RefreshLock = NoRefreshLock(),
    accountStates: any AccountStates = MemoryAccountStates(), diagnostics: Diagnostics = .off,
    makeProvider: @escaping @Sendable (AccountConfig) throws -> any OAuthProvider
  ) {
    self.diagnostics = diagnostics
    self.refreshLock = refreshLock
    self.accountStates = accountStates
    self.config = config
    self.store = store
    self.time = time
    self.warn = warn
    self.makeProvider = makeProvider
    self.transport = transport
  }

  /// Deletes every cached access token of `account` (all scope sets); the refresh token stays.
  /// - Throws: `StoreError`.
  public func dropAccessTokens(account: String) async throws {
    try await store.deleteAll(account: account, kind: .accessToken)
    // SharePoint accounts signed in through this one hold tokens and cookies derived from its
    // sign-in: they go with it (bug-cases.md B20).
    for dependent in config.accounts where dependent.via == account && dependent.name != account {
      try await store.deleteAll(account: dependent.name, kind: .accessToken)
      try await store.deleteAll(account: dependent.name, kind: .cookies)
    }
  }

  // MARK: store helpers

  func label(_ key: ItemKey, _ account: AccountConfig) -> String { key.label(provider: account.provider.rawValue) }

  /// The stored refresh token record, or nil. - Throws: `StoreError` (`.corrupt` for a bad document).
  func loadRefreshRecord(_ account: String) async throws -> RefreshTokenRecord? {
    let key = ItemKey.refreshToken(account)
    guard let secret = try await store.load(key) else { return nil }
    return try RefreshTokenRecord.decode(secret, item: key.description)
  }

  /// The cached access token for exactly `scopes`, or nil (a corrupt item counts as none: it is
  /// replaced on the next save). - Throws: `StoreError` other than `.corrupt`.
  func loadAccessRecord(_ account: String, _ scopes: ScopeSet) async throws -> AccessTokenRecord? {
    try await loadRecord(.accessToken(account, scopes), named: "the cached access token", decode: AccessTokenRecord.decode)
  }

  /// The document stored at `key`, decoded; nil when there is none or it cannot be decoded (a
  /// warning names it as `what`: it is replaced on the next save). - Throws: what `store.load` throws.
  func loadRecord<Record>(
    _ key: ItemKey, named what: String, decode: (Secret, String) throws -> Record
  ) async throws -> Record? {
    guard let secret = try await store.load(key) else { return nil }
    do {
      return try decode(secret, key.description)
    } catch {
      warn("\(what) \(key) is not readable; ignoring it")
      return nil
    }
  }

  /// Warns when `token` lives shorter than `refresh-margin` (`ExpiryPolicy`); called when a token
  /// is obtained for a scope set that had none cached, i.e. once per sign-in and scope set (a
  /// sign-in drops the cached tokens).
  func warnIfShortLived(_ token: IssuedToken) {
    guard let lifetime = token.lifetime,
      let warning = ExpiryPolicy.shortLifetimeWarning(
        account: token.account, lifetime: lifetime, refreshMargin: config.settings.refreshMargin)
    else { return }
    warn(warning)
  }

  /// Caches `token`, with the ID token of the same reply when it came with a readable `exp`
  /// (`kube-token = id` hands it out); a failure is only a warning (the token is good either way).
  func cacheAccessToken(_ token: IssuedToken, _ account: AccountConfig, idToken: KeptIDToken? = nil) async {
    let key = ItemKey.accessToken(account.name, ScopeSet(token.scopes))
    let record = AccessTokenRecord(
      accessToken: token.accessToken, expiresOn: token.expiresOn, scopes: token.scopes, tokenType: token.tokenType,
      obtainedAt: token.obtainedAt, idToken: idToken?.value, idTokenExpiresOn: idToken?.expiresOn)
    do {
      try await store.save(key, label: label(key, account), secret: record.encoded())
    } catch {
      warn("could not cache the access token of '\(account.name)' (\(error)); it will be refreshed next time")
    }
  }
}

/// An ID token as it is cached next to the access token of its reply.
struct KeptIDToken: Sendable {
  var value: Secret
  /// Unix seconds on this machine's clock when the token expires (`TokenGrant.keptIDToken`).
  var expiresOn: Int64
}

extension TokenGrant {
  /// The reply's ID token, when it has one whose `exp` can be read (a kube-apiserver refuses one
  /// without); nil otherwise. `exp` and `iat` are written by the provider's clock, so with both
  /// the token expires on this machine's clock at the reply's arrival plus `exp` − `iat`: judged
  /// by `exp` alone, a clock minutes behind handed out ID tokens the cluster had already refused,
  /// and one ahead dropped fresh ones (docs/bug-cases-4.md Y03). Without `iat`, `exp`.
  var keptIDToken: KeptIDToken? {
    guard let value = idTokenValue, let exp = idToken?.exp else { return nil }
    guard let iat = idToken?.iat, let receivedAt, exp > iat else { return KeptIDToken(value: value, expiresOn: exp) }
    return KeptIDToken(value: value, expiresOn: receivedAt + (exp - iat))
  }
}

extension AccessTokenRecord {
  /// What this record hands out as `kind`: the token, its expiry and its lifetime (seconds, nil
  /// when unknown); nil for `.idToken` when no ID token is kept.
  func credential(_ kind: CredentialKind) -> (token: Secret, expiresOn: Int64, lifetime: Int64?)? {
    switch kind {
    case .accessToken: return (accessToken, expiresOn, lifetime)
    case .idToken:
      guard let idToken, let idTokenExpiresOn else { return nil }
      return (idToken, idTokenExpiresOn, obtainedAt.map { idTokenExpiresOn - $0 })
    }
  }
}
