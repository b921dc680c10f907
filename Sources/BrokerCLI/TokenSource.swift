import BrokerAgent
import BrokerCore
import BrokerProviders
import Synchronization

/// Where `token get` and the git/docker helpers take access tokens from: the token service of this
/// one process (`DirectTokenSource`), or, for a command the agent runs, the agent's shared cache
/// with single-flight refresh (`SharedTokenSource`). Chosen by `ProcessContext.agent`.
protocol AccessTokenSource: Sendable {
  /// As `TokenService.accessToken(account:scopes:minValid:forceRefresh:kind:)`.
  /// - Parameters:
  ///   - config: the validated config the call runs with.
  ///   - diagnostics: `--verbose` lines (where the token came from).
  ///   - service: builds the token service (and its store), called only when one is needed.
  func accessToken(
    account: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, kind: CredentialKind, config: BrokerConfig,
    diagnostics: Diagnostics, service: () throws -> TokenService
  ) async throws -> IssuedToken

  /// As `TokenService.eraseHandedOut(account:token:)`, and forgets the token wherever it is cached.
  func eraseHandedOut(account: String, token: Secret, service: TokenService) async throws -> Bool
}

extension AccessTokenSource {
  /// An access token (`CredentialKind.accessToken`), as the requirement.
  func accessToken(
    account: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, config: BrokerConfig,
    diagnostics: Diagnostics, service: () throws -> TokenService
  ) async throws -> IssuedToken {
    try await accessToken(
      account: account, scopes: scopes, minValid: minValid, forceRefresh: forceRefresh, kind: .accessToken,
      config: config, diagnostics: diagnostics, service: service)
  }
}

/// Straight from the token service: every call reads the store (one process, one call).
struct DirectTokenSource: AccessTokenSource {
  func accessToken(
    account: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, kind: CredentialKind, config: BrokerConfig,
    diagnostics: Diagnostics, service: () throws -> TokenService
  ) async throws -> IssuedToken {
    try await service().accessToken(
      account: account, scopes: scopes, minValid: minValid, forceRefresh: forceRefresh, kind: kind)
  }

  func eraseHandedOut(account: String, token: Secret, service: TokenService) async throws -> Bool {
    try await service.eraseHandedOut(account: account, token: token)
  }
}

/// The agent's `TokenCache` in front of the token service (interface.md §8).
struct SharedTokenSource: AccessTokenSource {
  let cache: TokenCache
  /// Told where the token came from, so the agent can keep a pure answer (`AnswerRecorder`).
  var recorder: AnswerRecorder? = nil

  func accessToken(
    account name: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, kind: CredentialKind, config: BrokerConfig,
    diagnostics: Diagnostics, service: () throws -> TokenService
  ) async throws -> IssuedToken {
    let account = try config.requireAccount(name)
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

  func eraseHandedOut(account: String, token: Secret, service: TokenService) async throws -> Bool {
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
