import BrokerCore

/// Google OAuth 2.0 for one account (protocols.md §3): a "Desktop app" client (`client-id`,
/// `client-secret`, which Google requires even with PKCE and does not treat as confidential) for
/// the browser flow and refreshes, and optionally a "TVs and Limited Input devices" client
/// (`device-client-id`, `device-client-secret`) for the device flow.
///
/// Differences from Azure, all from protocols.md §3: redirect `http://127.0.0.1:PORT/`;
/// `access_type=offline` always and `prompt=consent` on the first sign-in (a refresh token comes
/// only with consent); refreshes return no new refresh token (the stored one is kept); the device
/// reply says `verification_url`; errors are plain `{"error","error_description","error_subtype"}`;
/// RFC 7009 revocation at `revocation-endpoint`.
public struct GoogleProvider: OAuthProvider {
  public let account: AccountConfig
  let clientID: String
  let clientSecret: Secret
  let endpoints: GoogleEndpoints
  let client: TokenEndpointClient
  let time: any TimeSource

  /// - Throws: `ConfigError.invalid` when `client-id` or `client-secret` is missing.
  public init(account: AccountConfig, settings: BrokerSettings, transport: any HTTPTransport, time: any TimeSource)
    throws
  {
    func missing(_ key: String, _ why: String) -> ConfigError { .accountKey(account.name, key, "missing (\(why))") }
    guard let clientID = account.clientID, !clientID.isEmpty else {
      throw missing("client-id", "the OAuth client ID of your Google Cloud project")
    }
    guard let secret = account.clientSecret, !secret.isEmpty else { throw missing("client-secret", "the Desktop app client secret") }
    self.account = account
    self.clientID = clientID
    self.clientSecret = secret
    self.endpoints = GoogleEndpoints(account: account)
    self.time = time
    self.client = TokenEndpointClient(
      transport: transport, time: time, caFiles: settings.caFiles(account), account: account.name)
  }

  /// The client of the device flow: `device-client-id` (with its secret), else `client-id`.
  var deviceClient: (id: String, secret: Secret) {
    (account.deviceClientID ?? clientID, account.deviceClientSecret ?? clientSecret)
  }

  /// The secret of `id`: the device client's for `device-client-id`, else `client-secret`.
  func secret(for id: String) -> Secret {
    id == account.deviceClientID && id != clientID ? deviceClient.secret : clientSecret
  }

  /// How `id` authenticates at the token endpoint: `client-auth`, else `client_secret_post` (Google
  /// reads the body only: golang/oauth2 `internal/token.go`); no secret (an empty
  /// `device-client-secret`) means a public client.
  func tokenAuthentication(for id: String) -> ClientAuthentication {
    ClientAuthentication(clientID: id, secret: secret(for: id), method: account.clientAuth, fallback: .clientSecretPost)
  }

  /// How `id` authenticates at the device authorization and revocation endpoints: as
  /// `client-auth` says when it is set; else as Google documents those requests (protocols.md
  /// §3.4, §3.6): `client_id` alone at device authorization, nothing but the token at revocation.
  func documentedAuthentication(for id: String) -> ClientAuthentication? {
    account.clientAuth == nil ? nil : tokenAuthentication(for: id)
  }

  var tokenHost: String { TokenEndpointClient.host(of: endpoints.token) }

  public func startDeviceAuthorization(scopes: ScopeSet) async throws -> DeviceAuthorization {
    try await GoogleDeviceCodeFlow(provider: self).start(scopes: scopes)
  }

  public func pollDeviceAuthorization(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int)
    async throws -> TokenGrant
  {
    try await GoogleDeviceCodeFlow(provider: self).poll(authorization, scopes: scopes, timeout: timeout)
  }

  public func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?) async throws -> TokenGrant {
    try await GoogleRefreshFlow(provider: self).refresh(refreshToken, scopes: scopes, clientID: clientID)
  }

  public var loopbackHost: LoopbackHost { .ipv4 }

  public func browserAuthorization(_ request: BrowserSignInRequest) async throws -> BrowserAuthorization {
    GoogleAuthCodeFlow(provider: self).authorization(request)
  }

  public func redeem(code: Secret, for authorization: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant {
    try await GoogleAuthCodeFlow(provider: self).redeem(code: code, for: authorization, scopes: scopes)
  }

  public func authorizationError(_ info: AuthorizationErrorInfo, account: String) -> ProviderError {
    AuthorizationErrors.classify(
      info, account: account, host: TokenEndpointClient.host(of: endpoints.authorization),
      hint: GoogleErrors.hint(info.error))
  }

  public var revocationHost: String? { TokenEndpointClient.host(of: endpoints.revocation) }

  public func revoke(_ refreshToken: Secret, clientID: String?) async throws -> RevocationOutcome {
    try await client.revoke(
      url: endpoints.revocation, token: refreshToken, hint: nil,
      client: documentedAuthentication(for: clientID ?? self.clientID))
  }
}

/// The account's Google endpoints (protocols.md §3.1), each replaced by its `*-endpoint` key.
struct GoogleEndpoints: Sendable, Equatable {
  var authorization: String
  var token: String
  var deviceAuthorization: String
  var revocation: String
  var userinfo: String

  init(account: AccountConfig) {
    let e = account.endpoints
    authorization = e.authorization ?? "https://accounts.google.com/o/oauth2/v2/auth"
    token = e.token ?? "https://oauth2.googleapis.com/token"
    deviceAuthorization = e.deviceAuthorization ?? "https://oauth2.googleapis.com/device/code"
    revocation = e.revocation ?? "https://oauth2.googleapis.com/revoke"
    userinfo = e.userinfo ?? "https://openidconnect.googleapis.com/v1/userinfo"
  }
}

/// The `scope` parameter Google gets: the requested scopes, with `openid email` added at sign-in
/// so the ID token names who signed in (both are allowed in the device flow too).
enum GoogleScopes {
  static func wire(_ requested: ScopeSet, signIn: Bool) -> String {
    var items = requested.items
    if signIn { for s in ["openid", "email"] where !items.contains(s) { items.append(s) } }
    return items.joined(separator: " ")
  }
}
