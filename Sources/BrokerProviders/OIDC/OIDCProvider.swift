import BrokerCore

/// Any OpenID Connect provider (or RFC 8414 OAuth 2.0 server) for one account, through its
/// discovery document (interface.md §2.1 `provider = oidc`; protocols-2.md §1): device code
/// (RFC 8628), browser sign-in (code + PKCE S256 + `state` + `nonce`, loopback `127.0.0.1`
/// redirect, RFC 9207 `iss` checked), refresh with or without rotation, RFC 7009 revocation where
/// the server has an endpoint. The client authenticates as `client-auth` says, else as the
/// document's `*_auth_methods_supported` suggest (`ClientAuthentication`).
///
/// Building one fetches nothing: the document is read (cache first) on the first request.
public struct OIDCProvider: OAuthProvider {
  public let account: AccountConfig
  let issuer: String
  let clientID: String
  let discovery: OIDCDiscovery
  let client: TokenEndpointClient
  let time: any TimeSource

  /// - Throws: `ConfigError.invalid` when `issuer` or `client-id` is missing.
  public init(
    account: AccountConfig, settings: BrokerSettings, transport: any HTTPTransport, time: any TimeSource,
    discoveryCache: any DiscoveryCache
  ) throws {
    func missing(_ key: String, _ why: String) -> ConfigError { .accountKey(account.name, key, "missing (\(why))") }
    guard let issuer = account.issuer else { throw missing("issuer", "the OpenID Provider's issuer URL") }
    guard let clientID = account.clientID else { throw missing("client-id", "the client ID registered at the provider") }
    self.account = account
    self.issuer = issuer
    self.clientID = clientID
    self.time = time
    let caFiles = settings.caFiles(account)
    self.client = TokenEndpointClient(transport: transport, time: time, caFiles: caFiles, account: account.name)
    self.discovery = OIDCDiscovery(
      account: account, issuer: issuer, transport: transport, caFiles: caFiles, cache: discoveryCache, time: time)
  }

  /// The issuer's `host[:port]`: the provider's name in messages (interface.md §2.1).
  var issuerHost: String { TokenEndpointClient.host(of: issuer) }

  /// How `id` authenticates: `client-auth`, else from `methods` (the document's list for that
  /// endpoint); `device-client-id` with `device-client-secret` (empty: public), else `client-secret`.
  func authentication(for id: String, methods: [String]?) -> ClientAuthentication {
    let device = account.deviceClientID.map { $0 == id && $0 != clientID } ?? false
    let secret = device ? (account.deviceClientSecret ?? account.clientSecret) : account.clientSecret
    return ClientAuthentication(
      clientID: id, secret: secret, method: account.clientAuth, fallback: OIDCMetadata.authMethod(methods))
  }

  public func startDeviceAuthorization(scopes: ScopeSet) async throws -> DeviceAuthorization {
    let metadata = try await discovery.metadata()
    guard let url = metadata.deviceAuthorizationEndpoint else {
      throw ProviderError.unsupported(
        "\(issuerHost) has no device authorization endpoint; use 'tokenbroker login \(account.name) --browser', "
          + "or set device-authorization-endpoint")
    }
    let id = account.deviceClientID ?? clientID
    let account = self.account.name
    let host = TokenEndpointClient.host(of: url)
    let auth = authentication(for: id, methods: metadata.tokenEndpointAuthMethods)
    return try await client.deviceAuthorization(
      url: url, fields: [("scope", OIDCScopes.wire(scopes, self.account, metadata))], client: auth
    ) {
      auth.secret == nil
        ? OIDCErrors.signInError($0, account: account, host: host)
        : OIDCErrors.deviceSignInError($0, account: account, host: host, deviceClientID: id)
    }
  }

  public func pollDeviceAuthorization(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int)
    async throws -> TokenGrant
  {
    let metadata = try await discovery.metadata()
    let id = authorization.clientID ?? account.deviceClientID ?? clientID
    let account = self.account.name
    let host = TokenEndpointClient.host(of: metadata.tokenEndpoint)
    let grant = try await client.pollDeviceGrant(
      authorization, url: metadata.tokenEndpoint, client: authentication(for: id, methods: metadata.tokenEndpointAuthMethods),
      requested: scopes, timeout: timeout
    ) { OIDCErrors.signInError($0, account: account, host: host) }
    return try await withIdentity(grant, metadata: metadata, clientID: id, nonce: nil)
  }

  public func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?) async throws -> TokenGrant {
    let metadata = try await discovery.metadata()
    var fields = [("grant_type", "refresh_token"), ("refresh_token", refreshToken.revealed)]
    if account.kubeToken == .id {
      // Keycloak and others return an ID token on refresh only when the request asks for
      // `openid` (keycloak/keycloak#10013): the scopes of the sign-in, `openid` among them.
      fields.append(("scope", OIDCScopes.wire(scopes, account, metadata)))
    } else if scopes != ScopeSet(account.scopes) {
      fields.append(("scope", scopes.items.joined(separator: " ")))
    }
    let account = self.account.name
    let host = TokenEndpointClient.host(of: metadata.tokenEndpoint)
    return try await client.grant(
      url: metadata.tokenEndpoint, fields: fields,
      client: authentication(for: clientID ?? self.clientID, methods: metadata.tokenEndpointAuthMethods),
      secrets: [refreshToken.revealed], requested: scopes
    ) {
      OAuthErrors.refreshError($0, account: account, host: host, hint: OIDCErrors.hint($0.error, host: host), scopes: scopes)
    }
  }

  /// `OIDCIDToken.verifyRefreshed` with this issuer and the client that refreshed.
  public func checkRefreshed(_ grant: TokenGrant, signedIn: RefreshTokenRecord) throws(ProviderError) {
    guard let claims = grant.idToken else { return }
    try OIDCIDToken.verifyRefreshed(
      claims, issuer: issuer, clientID: signedIn.clientID ?? clientID, subject: signedIn.subject,
      nonce: signedIn.nonce, account: account.name)
  }

  /// `http://127.0.0.1:PORT/` (RFC 8252 §7.3 and §8.3).
  public var loopbackHost: LoopbackHost { .ipv4 }

  public func browserAuthorization(_ request: BrowserSignInRequest) async throws -> BrowserAuthorization {
    try await OIDCAuthCodeFlow(provider: self).authorization(request)
  }

  public func redeem(code: Secret, for authorization: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant {
    try await OIDCAuthCodeFlow(provider: self).redeem(code: code, for: authorization, scopes: scopes)
  }

  public func authorizationError(_ info: AuthorizationErrorInfo, account: String) -> ProviderError {
    AuthorizationErrors.classify(info, account: account, host: issuerHost, hint: OIDCErrors.hint(info.error, host: issuerHost))
  }

  /// RFC 7009 with `token_type_hint=refresh_token` and the client's authentication.
  public func revoke(_ refreshToken: Secret, clientID: String?) async throws -> RevocationOutcome {
    let metadata = try await discovery.metadata()
    guard let url = metadata.revocationEndpoint else { return .noEndpoint }
    let methods = metadata.revocationEndpointAuthMethods ?? metadata.tokenEndpointAuthMethods
    return try await client.revoke(
      url: url, token: refreshToken, hint: "refresh_token",
      client: authentication(for: clientID ?? self.clientID, methods: methods))
  }

  public var revocationHost: String? { account.endpoints.revocation.map(TokenEndpointClient.host(of:)) ?? issuerHost }

  /// The identity of a new sign-in: from the ID token, checked (OpenID Connect Core §3.1.3.7),
  /// else from userinfo.
  /// - Throws: `ProviderError.loginFailed` when the ID token fails a check.
  func withIdentity(_ grant: TokenGrant, metadata: OIDCMetadata, clientID: String, nonce: String?) async throws
    -> TokenGrant
  {
    var grant = grant
    if let claims = grant.idToken {
      grant.identity = try OIDCIDToken.verify(
        claims, issuer: issuer, clientID: clientID, nonce: nonce, now: time.now, account: account.name)
      return grant
    }
    return await UserInfo(client: client, url: metadata.userinfoEndpoint).withIdentity(grant)
  }
}

/// The `scope` parameter an OpenID Provider gets: the requested scopes; the default list cut to
/// what the server lists in `scopes_supported` (when it lists any); `offline_access` added where
/// the server lists it (many issue no refresh token without it); `openid` added for
/// `kube-token = id` (no ID token without it).
enum OIDCScopes {
  static func wire(_ requested: ScopeSet, _ account: AccountConfig, _ metadata: OIDCMetadata) -> String {
    var items = requested.items
    if let supported = metadata.scopesSupported, !supported.isEmpty {
      // Only the default list is cut: scopes the user named (`scopes`, `--scope`) are sent as named.
      if requested == ScopeSet(AccountConfig.defaultScopes(.oidc)) { items = items.filter(supported.contains) }
      if supported.contains("offline_access") && !items.contains("offline_access") { items.append("offline_access") }
    }
    if account.kubeToken == .id && !items.contains("openid") { items.insert("openid", at: 0) }
    return items.joined(separator: " ")
  }
}
