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

/// The agent's access tokens in memory, with single-flight refresh (interface.md §8).
///
/// - A token is served from memory while it stays valid for `needed` more seconds
///   (max(`refresh-margin` capped at half its lifetime, `--min-valid`): `ExpiryPolicy`), unless
///   the caller forces a refresh.
/// - Otherwise one fetch per key runs (`fetch`: the `TokenService`, which stores a rotated refresh
///   token before it returns the access token); every caller for that key arriving meanwhile,
///   `--force-refresh` ones included, awaits that fetch. Fetches of one account run one after the
///   other, so two scope sets never redeem the same refresh token at once.
/// - `drop(account:)` forgets the account's tokens at once; a fetch that was running then is not
///   cached and no later caller joins it (its callers still get its answer: they asked before the
///   drop), so nothing of the old sign-in is handed out after a logout or a new login (B20).
public actor TokenCache {
  private struct Entry {
    var token: IssuedToken
    var account: AccountConfig
  }
  private struct Flight {
    var id: Int
    var task: Task<IssuedToken, any Error>
  }

  private var entries: [TokenCacheKey: Entry] = [:]
  private var flights: [TokenCacheKey: Flight] = [:]
  /// Whole answers to warm requests made from cached tokens, forgotten by every change of
  /// `entries` (`changed`); its revision is the cache's (`AnswerRecorder` decides
  /// what is kept).
  private let answers: KeptAnswers
  /// Bumped by `drop`: a fetch started under an older generation is not cached.
  private var generations: [String: Int] = [:]
  /// The last fetch of each account, which the next one of that account waits for.
  private var lastFetch: [String: Task<Void, Never>] = [:]
  private var nextID = 0
  private let time: any TimeSource
  /// The accounts' container registry tokens, forgotten with the account's tokens (`drop`).
  public nonisolated let registryTokens: RegistryTokenCache

  /// - Parameter time: the clock expiries are compared with (Unix seconds).
  public init(time: any TimeSource) {
    self.time = time
    answers = KeptAnswers(time: time)
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
    if !forceRefresh, let (token, _) = servable(key, account: account, needed: needed) { return token }
    let flight = flights[key] ?? startFetch(key, account: account, forceRefresh: forceRefresh, fetch: fetch)
    return try await flight.task.value
  }

  /// The token cached for `key` when it was obtained under `account`'s current configuration
  /// and is still valid for `needed` seconds (nil otherwise; nothing is started), with the
  /// cache's revision and the last Unix time at which memory still serves it (its expiry less
  /// `needed`).
  public func cachedWithRevision(
    _ key: TokenCacheKey, account: AccountConfig, needed: @Sendable (IssuedToken) -> Int64
  ) -> (token: IssuedToken, revision: Int, servedUntil: Int64)? {
    servable(key, account: account, needed: needed).map { ($0.token, answers.revision, $0.servedUntil) }
  }

  private func servable(
    _ key: TokenCacheKey, account: AccountConfig, needed: (IssuedToken) -> Int64
  ) -> (token: IssuedToken, servedUntil: Int64)? {
    guard let entry = entries[key], entry.account == account else { return nil }
    let servedUntil = entry.token.expiresOn - needed(entry.token)
    return time.now <= servedUntil ? (entry.token, servedUntil) : nil
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

  private func changed() { answers.forget() }

  /// Forgets every cached token of `account` (of every account when nil); a fetch running now is
  /// not cached when it ends.
  public func drop(account: String?) {
    let accounts = account.map { [$0] } ?? Array(Set(entries.keys.map(\.account)).union(flights.keys.map(\.account)))
    for name in accounts { generations[name, default: 0] += 1 }
    registryTokens.drop(account: account)
    changed()
    entries = entries.filter { key, _ in account != nil && key.account != account }
    flights = flights.filter { key, _ in account != nil && key.account != account }
  }

  /// Forgets the cached tokens of `account` equal to `token` (git `erase` of a token we handed out).
  /// - Returns: whether one was cached.
  @discardableResult
  public func drop(account: String, token: Secret) -> Bool {
    let matching = entries.filter { $0.key.account == account && $0.value.token.accessToken == token }.keys
    for key in matching { entries[key] = nil }
    if !matching.isEmpty { changed() }
    return !matching.isEmpty
  }

  /// How many tokens are cached (tests, status).
  public var count: Int { entries.count }

  private func startFetch(
    _ key: TokenCacheKey, account: AccountConfig, forceRefresh: Bool,
    fetch: @escaping @Sendable (Bool) async throws -> IssuedToken
  ) -> Flight {
    nextID += 1
    let id = nextID
    let generation = generations[key.account, default: 0]
    let previous = lastFetch[key.account]
    let task = Task<IssuedToken, any Error> {
      await previous?.value
      do {
        let token = try await fetch(forceRefresh)
        self.finish(key, id: id, generation: generation, token: token, account: account)
        return token
      } catch {
        self.finish(key, id: id, generation: generation, token: nil, account: account)
        throw error
      }
    }
    lastFetch[key.account] = Task { _ = try? await task.value }
    let flight = Flight(id: id, task: task)
    flights[key] = flight
    return flight
  }

  private func finish(_ key: TokenCacheKey, id: Int, generation: Int, token: IssuedToken?, account: AccountConfig) {
    if flights[key]?.id == id { flights[key] = nil }
    if let token, generations[key.account, default: 0] == generation {
      entries[key] = Entry(token: token, account: account)
      changed()
      // Many distinct `--scope` sets over a long life: keep memory bounded by forgetting the
      // expired ones once there are more than a handful.
      if entries.count > 64 {
        let now = time.now
        entries = entries.filter { $0.value.token.expiresOn > now }
      }
    }
  }
}
