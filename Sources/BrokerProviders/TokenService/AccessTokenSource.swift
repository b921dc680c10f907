import BrokerCore

/// Where `token get` and the git/docker helpers take access tokens from: the token service of this
/// one process (`DirectTokenSource`), or, for a command the agent runs, the agent's shared cache
/// with single-flight refresh (BrokerAgent's `SharedTokenSource`).
public protocol AccessTokenSource: Sendable {
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
  public func accessToken(
    account: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, config: BrokerConfig,
    diagnostics: Diagnostics, service: () throws -> TokenService
  ) async throws -> IssuedToken {
    try await accessToken(
      account: account, scopes: scopes, minValid: minValid, forceRefresh: forceRefresh, kind: .accessToken,
      config: config, diagnostics: diagnostics, service: service)
  }
}

/// Straight from the token service: every call reads the store (one process, one call).
public struct DirectTokenSource: AccessTokenSource {
  public init() {}

  public func accessToken(
    account: String, scopes: ScopeSet?, minValid: Int?, forceRefresh: Bool, kind: CredentialKind, config: BrokerConfig,
    diagnostics: Diagnostics, service: () throws -> TokenService
  ) async throws -> IssuedToken {
    try await service().accessToken(
      account: account, scopes: scopes, minValid: minValid, forceRefresh: forceRefresh, kind: kind)
  }

  public func eraseHandedOut(account: String, token: Secret, service: TokenService) async throws -> Bool {
    try await service.eraseHandedOut(account: account, token: token)
  }
}
