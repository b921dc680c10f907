import BrokerCore
import BrokerProviders
import Synchronization

/// The agent's `TokenCache` in front of the token service (interface.md §8).
public struct SharedTokenSource: AccessTokenSource {
  public let cache: TokenCache
  /// Told where the token came from, so the agent can keep a pure answer (`AnswerRecorder`).
  public var recorder: AnswerRecorder?
  /// For a forwarded request: only accounts with `forward = yes` (`ForwardRefusal`, exit 3).
  public var forwarded: Bool

  public init(cache: TokenCache, recorder: AnswerRecorder? = nil, forwarded: Bool = false) {
    self.cache = cache
    self.recorder = recorder
    self.forwarded = forwarded
  }

  public func accessToken(
    account name: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, kind: CredentialKind, config: BrokerConfig,
    diagnostics: Diagnostics, service: () throws -> TokenService
  ) async throws -> IssuedToken {
    let account = try config.requireAccount(name)
    guard !forwarded || account.forward else { throw ForwardRefusal.accountNotForwarded(account: name) }
    let requested = TokenService.requestedScopes(scopes, account: account, kind: kind)
    let margin = config.settings.refreshMargin
    let needed: @Sendable (IssuedToken) -> Int64 = { t in ExpiryPolicy.needed(refreshMargin: margin, minValid: minValid, lifetime: t.lifetime) }
    let key = TokenCacheKey(account: name, scopes: requested, kind: kind)
    let token: IssuedToken
    let fetched = diagnostics.isOn ? Flag() : nil
    if !forceRefresh, let cached = await cache.cachedWithRevision(key, account: account, needed: needed) {
      token = cached.token
      recorder?.took((cached.revision, cached.servedUntil))
    } else {
      recorder?.took(nil)
      let service = try service()
      token = try await cache.token(for: key, account: account, needed: needed, forceRefresh: forceRefresh) { force in
        fetched?.set()
        return try await service.accessToken(
          account: name, scopes: requested, minValid: minValid, forceRefresh: force, kind: kind)
      }
    }
    if let fetched, !fetched.isSet {
      let left = token.expiresOn - Int64(SystemTime().now)
      diagnostics.note(
        "the agent's memory had the token of '\(name)' [\(requested.items.joined(separator: " "))] (or shared another caller's refresh): \(left) s left")
    }
    return token
  }

  public func eraseHandedOut(account: String, token: Secret, service: TokenService) async throws -> Bool {
    let cached = await cache.drop(account: account, token: token)
    let stored = try await service.eraseHandedOut(account: account, token: token)
    return cached || stored
  }
}

/// Set once, read after: whether the agent's cache called this caller's fetch.
private final class Flag: Sendable {
  private let value = Mutex(false)
  func set() { value.withLock { $0 = true } }
  var isSet: Bool { value.withLock { $0 } }
}
