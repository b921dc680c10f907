import BrokerCore

/// Who signed in, from the ID token's claims (OpenID Connect Core §2, §5.1; Microsoft
/// `id-token-claims-reference`). Read without a signature check: the token came over TLS straight
/// from the token endpoint (OpenID Connect Core §3.1.3.7 item 6).
public struct Identity: Sendable, Equatable {
  /// `preferred_username`, else `email`, else `upn`.
  public var username: String?
  /// Azure `oid`: the user's object id.
  public var objectID: String?
  /// Azure `tid`: the tenant the user signed in to.
  public var tenantID: String?
  /// `sub`: the pairwise subject (Azure) or the account id (Google).
  public var subject: String?

  public init(username: String? = nil, objectID: String? = nil, tenantID: String? = nil, subject: String? = nil) {
    self.username = username
    self.objectID = objectID
    self.tenantID = tenantID
    self.subject = subject
  }

  /// What to show and store as "the signed-in identity": the username, else `oid`, else `sub`
  /// (interface.md §7 `identity`).
  public var display: String? { username ?? objectID ?? subject }
}

/// A device authorization response (RFC 8628 §3.2). Strings are the server's, verbatim: strip
/// control characters before printing them.
public struct DeviceAuthorization: Sendable {
  /// The code the client polls with; secret (RFC 8628 §5.6).
  public var deviceCode: Secret
  /// The code the user types at `verificationURI`.
  public var userCode: String
  /// Where the user goes (`verification_uri`, or Google's `verification_url`).
  public var verificationURI: String
  /// The URI with the code filled in, when the server sends one (Microsoft does not).
  public var verificationURIComplete: String?
  /// Seconds the device code is valid for, counted from `issuedAt` (default 900 when absent).
  public var expiresIn: Int
  /// Seconds to wait between polls (default 5 when absent, RFC 8628 §3.2).
  public var interval: Int
  /// The server's ready-made instruction text, if any.
  public var message: String?
  /// Unix seconds when the reply was received; `expiresIn` counts from here.
  public var issuedAt: Int64
  /// The client the code was issued to (Google: `device-client-id`); nil: the account's `client-id`.
  public var clientID: String?

  public init(
    deviceCode: Secret, userCode: String, verificationURI: String, verificationURIComplete: String? = nil,
    expiresIn: Int, interval: Int, message: String? = nil, issuedAt: Int64, clientID: String? = nil
  ) {
    self.clientID = clientID
    self.deviceCode = deviceCode
    self.userCode = userCode
    self.verificationURI = verificationURI
    self.verificationURIComplete = verificationURIComplete
    self.expiresIn = expiresIn
    self.interval = interval
    self.message = message
    self.issuedAt = issuedAt
  }
}

/// A successful token response (RFC 6749 §5.1).
public struct TokenGrant: Sendable {
  public var accessToken: Secret
  /// Unix seconds: the time of the reply plus `expires_in`.
  public var expiresOn: Int64
  /// The new refresh token; nil when the reply has none or `""` (keep the stored one: bug-cases.md B11).
  public var refreshToken: Secret?
  /// True when the reply carried `"refresh_token": ""` (treated as absent; worth a warning).
  public var refreshTokenWasEmpty: Bool
  /// The granted scopes (`scope`), else the requested ones.
  public var scopes: [String]
  /// From the `id_token`, when the reply has one.
  public var identity: Identity?
  /// `token_type`; `Bearer` when absent.
  public var tokenType: String
  /// The claims of the `id_token`, read once where the reply is, for the OpenID Connect checks of
  /// a new sign-in; nil when the reply has none.
  public var idToken: IDTokenClaims?
  /// The `id_token` itself (a JWT, secret), kept with the access token for `kube-token = id`;
  /// nil when the reply has none.
  public var idTokenValue: Secret?
  /// Unix seconds when the reply arrived (`expiresOn` less `expires_in`), when known: the start of
  /// the token's lifetime, not the later moment its record is written.
  public var receivedAt: Int64?
  /// Unix seconds when the refresh token stops working, where the reply states it: Google's
  /// `refresh_token_expires_in` (an OAuth consent screen in "Testing" status: 7 days), Keycloak's
  /// `refresh_expires_in` (its `0`, no expiry, is nil); nil when unstated.
  public var refreshTokenExpiresOn: Int64?

  public init(
    accessToken: Secret, expiresOn: Int64, refreshToken: Secret?, refreshTokenWasEmpty: Bool = false,
    scopes: [String], identity: Identity?, tokenType: String = "Bearer", idToken: IDTokenClaims? = nil,
    receivedAt: Int64? = nil, idTokenValue: Secret? = nil
  ) {
    self.idTokenValue = idTokenValue
    self.idToken = idToken
    self.receivedAt = receivedAt
    self.accessToken = accessToken
    self.expiresOn = expiresOn
    self.refreshToken = refreshToken
    self.refreshTokenWasEmpty = refreshTokenWasEmpty
    self.scopes = scopes
    self.identity = identity
    self.tokenType = tokenType
  }
}

/// Which token of a reply a caller is handed (`IssuedToken`): the access token, or for
/// `--format exec-credential` of a `kube-token = id` account the OpenID Connect ID token, with the
/// ID token's own `exp` as its expiry (interface.md §2.1 `kube-token`).
public enum CredentialKind: Sendable, Hashable { case accessToken, idToken }

/// An access token handed to a caller (`token get`, the git and docker helpers), or an ID token
/// (`CredentialKind.idToken`: then `accessToken` holds the ID token and `expiresOn` its `exp`).
public struct IssuedToken: Sendable {
  public var account: String
  public var provider: ProviderKind
  /// `Bearer`.
  public var tokenType: String
  /// The token handed out: the access token, or the ID token for `CredentialKind.idToken`.
  public var accessToken: Secret
  /// Unix seconds.
  public var expiresOn: Int64
  /// The requested scope set, sorted (not the OIDC scopes added on the wire).
  public var scopes: [String]
  /// The signed-in identity stored with the refresh token, if known.
  public var identity: String?
  /// Unix seconds when the token was obtained from the provider, or nil when unknown; with
  /// `expiresOn` it gives the lifetime that caps the refresh margin (`ExpiryPolicy`).
  public var obtainedAt: Int64?

  public init(
    account: String, provider: ProviderKind, tokenType: String = "Bearer", accessToken: Secret, expiresOn: Int64,
    scopes: [String], identity: String?, obtainedAt: Int64? = nil
  ) {
    self.obtainedAt = obtainedAt
    self.account = account
    self.provider = provider
    self.tokenType = tokenType
    self.accessToken = accessToken
    self.expiresOn = expiresOn
    self.scopes = scopes
    self.identity = identity
  }

  /// Seconds from `obtainedAt` to `expiresOn`, or nil when unknown.
  public var lifetime: Int64? { obtainedAt.map { expiresOn - $0 } }
}

/// One line of `tokenbroker accounts`.
public struct AccountStatus: Sendable {
  public var account: AccountConfig
  /// A refresh token is stored.
  public var signedIn: Bool
  public var identity: String?
  /// Unix seconds: expiry of the cached access token for the account's default scopes (else the
  /// latest of its cached access tokens); nil when none is cached.
  public var accessTokenExpiry: Int64?

  public init(account: AccountConfig, signedIn: Bool, identity: String?, accessTokenExpiry: Int64?) {
    self.account = account
    self.signedIn = signedIn
    self.identity = identity
    self.accessTokenExpiry = accessTokenExpiry
  }
}
