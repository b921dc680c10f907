import BrokerCore

/// GitHub and GitHub Enterprise Server (interface.md §2.2 `provider = github`): no discovery, the
/// endpoints fixed under `authority` (`GitHubEndpoints`). The device flow is the default and
/// sends no secret; the browser flow is the code grant with PKCE S256 and, where the account has
/// one, `client_secret` in the body; a refresh (GitHub Apps with expiring user tokens: 8 h access
/// tokens, a refresh token that rotates and whose predecessor dies) sends the secret where there
/// is one. Replies are JSON or form-encoded and carry errors with HTTP 200 (read in
/// `TokenEndpointClient`); GitHub's own error codes are read in `GitHubErrors`. Who signed in is
/// the `login` of `GET {api}/user`.
public struct GitHubProvider: OAuthProvider {
  public let account: AccountConfig
  let clientID: String
  let endpoints: GitHubEndpoints
  let client: TokenEndpointClient
  let time: any TimeSource

  /// - Throws: `ConfigError.invalid` when `client-id` is missing.
  public init(account: AccountConfig, settings: BrokerSettings, transport: any HTTPTransport, time: any TimeSource) throws {
    guard let clientID = account.clientID else {
      throw ConfigError.accountKey(account.name, "client-id", "missing (the client ID of your GitHub app)")
    }
    self.account = account
    self.clientID = clientID
    self.time = time
    self.endpoints = GitHubEndpoints(account: account)
    self.client = TokenEndpointClient(
      transport: transport, time: time, caFiles: settings.caFiles(account), account: account.name)
  }

  /// The authority's `host[:port]`: the provider's name in messages.
  var host: String { TokenEndpointClient.host(of: account.authority) }

  /// The secret where the account has one, in the body (GitHub documents `client_secret` as a
  /// body parameter of the token request).
  var confidential: ClientAuthentication {
    ClientAuthentication(clientID: clientID, secret: account.clientSecret, method: .clientSecretPost)
  }

  public func startDeviceAuthorization(scopes: ScopeSet) async throws -> DeviceAuthorization {
    let account = self.account.name
    let host = TokenEndpointClient.host(of: endpoints.deviceAuthorization)
    return try await client.deviceAuthorization(
      url: endpoints.deviceAuthorization, fields: [("scope", scopes.items.joined(separator: " "))],
      client: .publicClient(clientID)
    ) { GitHubErrors.signInError($0, account: account, host: host) }
  }

  public func pollDeviceAuthorization(_ authorization: DeviceAuthorization, scopes: ScopeSet, timeout: Int)
    async throws -> TokenGrant
  {
    let account = self.account.name
    let host = TokenEndpointClient.host(of: endpoints.token)
    let grant = try await client.pollDeviceGrant(
      authorization, url: endpoints.token, client: .publicClient(clientID), requested: scopes, timeout: timeout
    ) { GitHubErrors.signInError($0, account: account, host: host) }
    return await withIdentity(grant)
  }

  public func refresh(_ refreshToken: Secret, scopes: ScopeSet, clientID: String?) async throws -> TokenGrant {
    let account = self.account.name
    let host = TokenEndpointClient.host(of: endpoints.token)
    var auth = confidential
    if let clientID { auth.clientID = clientID }
    return try await client.grant(
      url: endpoints.token, fields: [("grant_type", "refresh_token"), ("refresh_token", refreshToken.revealed)],
      client: auth, secrets: [refreshToken.revealed], requested: scopes
    ) { GitHubErrors.refreshError($0, account: account, host: host, scopes: scopes) }
  }

  /// `http://127.0.0.1:PORT/` (the callback a GitHub app registers; any port of it is accepted
  /// for a loopback callback).
  public var loopbackHost: LoopbackHost { .ipv4 }

  public func browserAuthorization(_ request: BrowserSignInRequest) async throws -> BrowserAuthorization {
    BrowserAuthorization.codeRequest(
      request, endpoint: endpoints.authorization, clientID: clientID, loopbackHost: loopbackHost,
      scope: request.scopes.items.joined(separator: " "), extra: [])
  }

  public func redeem(code: Secret, for authorization: BrowserAuthorization, scopes: ScopeSet) async throws -> TokenGrant {
    let account = self.account.name
    let host = TokenEndpointClient.host(of: endpoints.token)
    let (fields, secrets) = authorization.redemption(code: code)
    let grant = try await client.grant(
      url: endpoints.token, fields: fields, client: confidential, secrets: secrets, requested: scopes, redeemsCode: true
    ) { reply in
      AuthorizationErrors.refusedCode(reply, account: account, reason: nil)
        ?? GitHubErrors.signInError(reply, account: account, host: host)
    }
    return await withIdentity(grant)
  }

  public func authorizationError(_ info: AuthorizationErrorInfo, account: String) -> ProviderError {
    AuthorizationErrors.classify(info, account: account, host: host, hint: GitHubErrors.hint(info.error, host: host))
  }

  /// The grant with who signed in: the `login` of `GET {api}/user` (GitHub's REST API, the
  /// access token as a bearer token); the grant unchanged when that fails (the identity is only
  /// shown and stored for display).
  func withIdentity(_ grant: TokenGrant) async -> TokenGrant {
    var grant = grant
    let request = HTTPRequest(
      method: "GET", url: endpoints.user,
      headers: [
        HTTPHeader("Authorization", "Bearer " + grant.accessToken.revealed),
        HTTPHeader("Accept", "application/vnd.github+json"),
      ],
      caFiles: client.caFiles)
    guard let response = try? await client.transport.send(request), response.status == 200,
      let fields = JSONFields.parse(response.body), let login = fields.string("login"), !login.isEmpty
    else { return grant }
    grant.identity = Identity(username: IDToken.printable(login), subject: fields.digits("id"))
    return grant
  }
}

/// A GitHub account's endpoints (interface.md §2.2): under `authority`, each overridden by its
/// key; the REST base is `api-endpoint`, else `https://api.github.com` for github.com and
/// `{authority}/api/v3` for GitHub Enterprise Server.
struct GitHubEndpoints: Sendable, Equatable {
  var authorization: String
  var token: String
  var deviceAuthorization: String
  /// The REST base, without a terminating `/`.
  var api: String
  /// `GET` it for who the token belongs to (`login`).
  var user: String

  init(account: AccountConfig) {
    let e = account.endpoints
    let authority = account.authority
    authorization = e.authorization ?? authority + "/login/oauth/authorize"
    token = e.token ?? authority + "/login/oauth/access_token"
    deviceAuthorization = e.deviceAuthorization ?? authority + "/login/device/code"
    api = account.apiEndpoint ?? (authority == "https://github.com" ? "https://api.github.com" : authority + "/api/v3")
    user = e.userinfo ?? api + "/user"
  }
}
