import BrokerCore

/// The caller's part of a browser sign-in: the loopback listener is already bound to `port`;
/// `receive` opens the browser on the authorization URL and waits for the redirect.
public struct BrowserSignIn: Sendable {
  /// The port the loopback listener is bound to.
  public var port: Int
  /// SHA-256 for the PKCE challenge.
  public var sha256: PKCE.Digest
  /// Opens the browser and returns the verdict of the first redirect whose `state` matched
  /// (`.code` or `.error`).
  /// - Throws: `ProviderError.loginTimedOut` after `login-timeout`, `CancellationError`.
  public var receive: @Sendable (BrowserAuthorization) async throws -> RedirectVerdict

  public init(
    port: Int, sha256: @escaping PKCE.Digest,
    receive: @escaping @Sendable (BrowserAuthorization) async throws -> RedirectVerdict
  ) {
    self.port = port
    self.sha256 = sha256
    self.receive = receive
  }
}

extension TokenService {
  /// `login --browser` (interface.md §3; RFC 6749 §4.1 with PKCE S256 and a loopback redirect):
  /// builds the authorization request (fresh PKCE pair and `state`), lets `signIn.receive` run the
  /// browser part, redeems the code, and stores the result like the device flow.
  ///
  /// The first sign-in of an account (no refresh token stored) tells the provider so (Google then
  /// asks for consent, the only way it issues a refresh token).
  /// - Parameters:
  ///   - scopes: what to ask for (nil: the account's scopes); `claims`: a challenge to send back.
  /// - Returns: the new access token, with the identity that signed in.
  /// - Throws: `ConfigError`; `ProviderError.declined`, `.loginTimedOut`, `.loginFailed` (code
  ///   refused: PKCE mismatch, reused or expired code; interaction errors), `.rejected`,
  ///   `.unavailable`, `.unsupported`; `StoreError`.
  public func loginWithBrowser(
    account name: String, loginHint: String?, scopes asked: ScopeSet? = nil, claims: String? = nil,
    signIn: BrowserSignIn
  ) async throws -> IssuedToken {
    let account = try config.requireAccount(name)
    let provider = try makeProvider(account)
    let scopes = asked ?? ScopeSet(account.scopes)
    let stored: RefreshTokenRecord?
    do {
      stored = try await loadRefreshRecord(name)
    } catch StoreError.corrupt {
      stored = nil
    }
    let request = BrowserSignInRequest(
      port: signIn.port, scopes: scopes, loginHint: loginHint ?? account.loginHint, firstSignIn: stored == nil,
      pkce: PKCE.random(sha256: signIn.sha256), state: BrowserSignInRequest.randomState(), claims: claims)
    var authorization = try await provider.browserAuthorization(request)
    switch try await signIn.receive(authorization) {
    case .code(let code, let issuer):
      authorization.responseIssuer = issuer
      let grant = try await provider.redeem(code: code, for: authorization, scopes: scopes)
      return try await storeSignIn(
        grant, account: account, scopes: scopes, clientID: authorization.clientID, previous: stored)
    case .error(let info):
      throw provider.authorizationError(info, account: name)
    case .foreign, .incomplete:
      throw ProviderError.loginFailed(account: name, reason: "the redirect carried no authorization code")
    }
  }
}
