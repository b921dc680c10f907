import BrokerCore
import BrokerProviders
import BrokerWire

/// What a cached access token is kept under: the account, the exact scope set and which token
/// of the reply (`kube-token = id` hands out ID tokens, each with its own expiry). The account's
/// configuration is stored with the token, so a token obtained under another tenant, client or
/// authority (the config changed) is never handed out.
public struct TokenCacheKey: Sendable, Hashable {
  public var account: String
  public var scopes: ScopeSet
  public var kind: CredentialKind
  public init(account: String, scopes: ScopeSet, kind: CredentialKind = .accessToken) {
    self.account = account
    self.scopes = scopes
    self.kind = kind
  }
}

/// The agent's access tokens in memory, with single-flight refresh (interface.md §8): a
/// `SingleFlightCache` of `IssuedToken`s that expire at their `expiresOn`.
///
/// - A token is served from memory while it stays valid for `needed` more seconds
///   (max(`refresh-margin` capped at half its lifetime, `--min-valid`): `ExpiryPolicy`), unless
///   the caller forces a refresh.
/// - Otherwise one fetch per key runs (`fetch`: the `TokenService`, which stores a rotated refresh
///   token before it returns the access token); every caller for that key arriving meanwhile,
///   `--force-refresh` ones included, awaits that fetch. Fetches of one account run one after the
///   other, so two scope sets never redeem the same refresh token at once.
/// - `drop(account:)` forgets the account's tokens (and registry tokens) at once; a fetch that was
///   running then is not cached and no later caller joins it (its callers still get its answer:
///   they asked before the drop), so nothing of the old sign-in is handed out after a logout or a
///   new login (bug-cases.md B20).
public actor TokenCache {
  private let tokens: SingleFlightCache<TokenCacheKey, IssuedToken>
  /// Whole answers to warm requests made from cached tokens, forgotten by every change of the
  /// tokens kept; its revision is the cache's (`AnswerRecorder` decides what is kept).
  private let answers: KeptAnswers
  /// The accounts' container registry tokens, forgotten with the account's tokens (`drop`).
  public nonisolated let registryTokens: RegistryTokenCache
  /// Rotated refresh tokens not yet written to the store (`AgentStore`); a `drop` keeps them.
  public nonisolated let unwritten = UnwrittenRefreshTokens()

  /// - Parameter time: the clock expiries are compared with (Unix seconds).
  public init(time: any TimeSource) {
    let answers = KeptAnswers(time: time)
    self.answers = answers
    tokens = SingleFlightCache(
      time: time, oneFetchPerAccount: true, expiry: { $0.expiresOn }, onChange: { answers.forget() })
    registryTokens = RegistryTokenCache(time: time)
  }

  /// An access token for `key`, from memory or from the one running (or a new) fetch.
  /// - Parameters:
  ///   - account: the account's current configuration.
  ///   - needed: seconds a cached token must stay valid to be served from memory.
  ///   - forceRefresh: skip memory (a running fetch is still shared).
  ///   - fetch: obtains a token; its argument is `forceRefresh` of the caller that started it.
  /// - Throws: what `fetch` throws, to every caller sharing it.
  public func token(
    for key: TokenCacheKey, account: AccountConfig, needed: Int64, forceRefresh: Bool,
    fetch: @escaping @Sendable (_ forceRefresh: Bool) async throws -> IssuedToken
  ) async throws -> IssuedToken {
    try await token(for: key, account: account, needed: { _ in needed }, forceRefresh: forceRefresh, fetch: fetch)
  }

  /// As `token(for:account:needed:forceRefresh:fetch:)`, with `needed` computed for each cached
  /// token (its lifetime caps the refresh margin: `ExpiryPolicy`).
  public func token(
    for key: TokenCacheKey, account: AccountConfig, needed: @Sendable (IssuedToken) -> Int64, forceRefresh: Bool,
    fetch: @escaping @Sendable (_ forceRefresh: Bool) async throws -> IssuedToken
  ) async throws -> IssuedToken {
    try await tokens.value(for: key, account: account, needed: needed, forceRefresh: forceRefresh, fetch: fetch)
  }

  /// The token cached for `key` when it was obtained under `account`'s current configuration
  /// and is still valid for `needed` seconds (nil otherwise; nothing is started), with the
  /// cache's revision and the last Unix time at which memory still serves it (its expiry less
  /// `needed`). The revision is read before the token: a change between the two makes `keep`
  /// ignore the answer, never pair an old token with a newer revision.
  public func cachedWithRevision(
    _ key: TokenCacheKey, account: AccountConfig, needed: @Sendable (IssuedToken) -> Int64
  ) -> (token: IssuedToken, revision: Int, servedUntil: Int64)? {
    let revision = answers.revision
    return tokens.cached(key, account: account, needed: needed).map { ($0.value, revision, $0.servedUntil) }
  }

  /// The answer kept for `request` (`keep`), while it is still the answer: made under config
  /// revision `configRevision`, nothing cached has changed since, and its token is still one
  /// memory would serve. Not isolated to the actor: the socket loop's thread asks it directly.
  public nonisolated func answer(to request: AgentRequest, configRevision: Int) -> AgentReply? {
    answers.answer(to: request, configRevision: configRevision)
  }

  /// Whether an answer is kept for `request` (`answer` may still refuse it): a cheap test before
  /// the config's revision is computed.
  public nonisolated func hasKeptAnswer(for request: AgentRequest) -> Bool { answers.contains(request) }

  /// Keeps `reply` to `request`, made from one token taken from memory at `revision` and served
  /// from memory until `servedUntil` (`cachedWithRevision`); ignored when the cache has changed
  /// since. Every change forgets every kept answer; at most `answerCapacity` are kept.
  public nonisolated func keep(
    _ reply: AgentReply, to request: AgentRequest, configRevision: Int, revision: Int, servedUntil: Int64
  ) {
    answers.keep(reply, to: request, configRevision: configRevision, revision: revision, servedUntil: servedUntil)
  }

  public static let answerCapacity = KeptAnswers.capacity

  /// How many answers are kept (tests).
  public nonisolated var keptAnswers: Int { answers.count }

  /// Forgets every cached token of `account` (of every account when nil), and its registry
  /// tokens; a fetch running now is not cached when it ends.
  public func drop(account: String?) {
    registryTokens.drop(account: account)
    tokens.drop(account: account)
  }

  /// Forgets the cached tokens of `account` equal to `token` (git `erase` of a token we handed out).
  /// - Returns: whether one was cached.
  @discardableResult
  public func drop(account: String, token: Secret) -> Bool {
    tokens.drop(account: account) { $0.accessToken == token }
  }

  /// How many tokens are cached (tests, status).
  public var count: Int { tokens.count }

  /// How many callers await a fetch now (tests).
  public nonisolated var waiting: Int { tokens.waiting }
}

extension TokenCacheKey: AccountScopedKey {}
