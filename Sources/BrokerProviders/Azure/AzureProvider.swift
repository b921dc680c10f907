import BrokerCore

/// Microsoft identity platform v2.0 (Entra ID) for one account, as a public client: `client_id`,
/// never a client secret (protocols.md §2.3, AADSTS700025).
public struct AzureProvider: OAuthProvider {
  public let account: AccountConfig
  let clientID: String
  let endpoints: AzureEndpoints
  let client: TokenEndpointClient
  let time: any TimeSource

  /// - Throws: `ConfigError.invalid` when the account has no `client-id`.
  public init(account: AccountConfig, settings: BrokerSettings, transport: any HTTPTransport, time: any TimeSource)
    throws
  {
    guard let clientID = account.clientID, !clientID.isEmpty else {
      throw ConfigError.accountKey(account.name, "client-id", "missing (the application (client) ID of your app registration)")
    }
    self.account = account
    self.clientID = clientID
    self.endpoints = AzureEndpoints(account: account)
    self.time = time
    self.client = TokenEndpointClient(
      transport: transport, time: time, caFiles: settings.caFiles(account), account: account.name)
  }

  /// `POST {authority}/{tenant}/oauth2/v2.0/devicecode` (protocols.md §2.5).
  public func startDeviceAuthorization(scopes: ScopeSet) async throws -> DeviceAuthorization {
    try await AzureDeviceCodeFlow(provider: self).start(scopes: scopes, claims: nil)
  }

  /// The same, with `claims` (the challenge of a step-up) on the request.
  public func startDeviceAuthorization(scopes: ScopeSet, claims: String?) async throws -> DeviceAuthorization {
    try await AzureDeviceCodeFlow(provider: self).start(scopes: scopes, claims: claims)
  }

  /// Polls `…/token` with the device code grant (protocols.md §2.5; RFC 8628 §3.4–3.5).
  public func pollDeviceAuthorization(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int)
    async throws -> TokenGrant
  {
    try await AzureDeviceCodeFlow(provider: self).poll(authorization, scopes: scopes, timeout: timeout)
  }

  /// `grant_type=refresh_token` at `…/token` (protocols.md §2.4), as `clientID` (nil: `client-id`).
  public func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?) async throws -> TokenGrant {
    try await AzureRefreshFlow(provider: self).refresh(refreshToken, scopes: scopes, clientID: clientID, claims: nil)
  }

  /// The same with `claims` (a claims challenge, JSON) on the request (Entra: `claims`).
  public func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?, claims: String?) async throws
    -> TokenGrant
  {
    try await AzureRefreshFlow(provider: self).refresh(refreshToken, scopes: scopes, clientID: clientID, claims: claims)
  }

  /// `http://localhost:PORT/`: the portal accepts `localhost` only (protocols.md §2.9).
  public var loopbackHost: LoopbackHost { .localhost }

  /// `GET {authority}/{tenant}/oauth2/v2.0/authorize` with PKCE S256 (protocols.md §2.2).
  public func browserAuthorization(_ request: BrowserSignInRequest) async throws -> BrowserAuthorization {
    AzureAuthCodeFlow(provider: self).authorization(request)
  }

  /// `grant_type=authorization_code` at `…/token` (protocols.md §2.3).
  public func redeem(code: Secret, for authorization: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant {
    try await AzureAuthCodeFlow(provider: self).redeem(code: code, for: authorization, scopes: scopes)
  }

  /// The redirect's error, with AADSTS hints (protocols.md §2.2, §2.7).
  public func authorizationError(_ info: AuthorizationErrorInfo, account: String) -> ProviderError {
    let code = info.detail.flatMap(OAuthErrorReply.leadingAADSTS).flatMap { Int($0.dropFirst(6)) }
    return AuthorizationErrors.classify(
      info, account: account, host: TokenEndpointClient.host(of: endpoints.authorization),
      hint: code.flatMap { AzureErrors.codeHint([$0]) } ?? AzureErrors.errorHint(info.error))
  }

  var tokenHost: String { TokenEndpointClient.host(of: endpoints.token) }
}

/// The account's v2.0 endpoints: `{authority}/{tenant}/oauth2/v2.0/devicecode`, `/token` and
/// `/authorize`, each replaced by the account's `device-authorization-endpoint`, `token-endpoint`
/// or `authorization-endpoint` when set.
struct AzureEndpoints: Sendable, Equatable {
  var deviceAuthorization: String
  var token: String
  var authorization: String

  init(account: AccountConfig) {
    var authority = account.authority
    while authority.hasSuffix("/") { authority.removeLast() }
    let base = "\(authority)/\(account.tenant)/oauth2/v2.0"
    deviceAuthorization = account.endpoints.deviceAuthorization ?? base + "/devicecode"
    token = account.endpoints.token ?? base + "/token"
    authorization = account.endpoints.authorization ?? base + "/authorize"
  }
}

/// The `scope` parameter Azure gets (protocols.md §2.6): the requested resource scopes first (the
/// token is for the resource of the first one), then the OpenID Connect scopes, with
/// `offline_access` always (no refresh token without it) and `openid profile` at sign-in (for the
/// ID token).
enum AzureScopes {
  static let oidc = ["openid", "profile", "email", "offline_access"]

  static func wire(_ requested: ScopeSet, signIn: Bool) -> String {
    let resources = requested.items.filter { !oidc.contains($0) }
    var wanted = Set(requested.items.filter { oidc.contains($0) })
    wanted.insert("offline_access")
    if signIn { wanted.formUnion(["openid", "profile"]) }
    return (resources + oidc.filter { wanted.contains($0) }).joined(separator: " ")
  }
}
