/// What to check for an OAuth `error` of an OpenID Provider (RFC 6749 §5.2, RFC 8628 §3.5).
enum OIDCErrors {
  /// An error reply during a sign-in (device authorization, device polling, code redemption): a
  /// refused scope or offline access (`invalid_scope`; Keycloak's `not_allowed`) is a sign-in
  /// that did not complete (exit 6) with the server's own words and what to change
  /// (bug-cases-3.md X03); the rest as `OAuthErrors.requestError`.
  static func signInError(_ reply: OAuthErrorReply, account: String, host: String) -> ProviderError {
    guard ["invalid_scope", "not_allowed"].contains(reply.error) else {
      return OAuthErrors.requestError(reply, account: account, host: host, hint: hint(reply.error, host: host))
    }
    return .loginFailed(account: account, reason: "\(host) refused it (\(reply.summary)); \(hint(reply.error, host: host))")
  }

  /// `signInError` for a device authorization request that carried a secret: `unauthorized_client`
  /// (Auth0 answers 403 so "the moment a client_secret is added") or `invalid_client` (Entra's
  /// AADSTS700025 "Client is public") is most often a public device client given a secret, so the
  /// sign-in did not complete (exit 6) naming that client and the empty `device-client-secret`
  /// that makes it public (RFC 8628 §5.6; bug-cases-3.md X05 step 4).
  static func deviceSignInError(_ reply: OAuthErrorReply, account: String, host: String, deviceClientID: String)
    -> ProviderError
  {
    guard ["unauthorized_client", "invalid_client"].contains(reply.error) else {
      return signInError(reply, account: account, host: host)
    }
    return .loginFailed(
      account: account,
      reason: "\(host) refused the device client '\(deviceClientID)' with its secret (\(reply.summary)); device "
        + "clients are usually public: set an empty device-client-secret ('device-client-secret =') in [account "
        + "\(account)], or check the secret registered for '\(deviceClientID)' at \(host)")
  }

  static func hint(_ error: String, host: String) -> String {
    switch error {
    case "invalid_client":
      return "check client-id and client-secret, and client-auth (client_secret_basic, client_secret_post or none) "
        + "against the client registered at \(host)"
    case "unauthorized_client":
      return "the client registered at \(host) is not allowed this grant; enable it (device code, refresh token "
        + "or authorization code) for client-id there"
    case "invalid_scope":
      return "check the scopes of the account (or --scope) against what \(host) offers; if it refuses offline_access "
        + "(Google wants access_type=offline instead), set scopes without it in the account's group"
    case "not_allowed":
      // Keycloak: "Offline tokens not allowed for the user or client" (bug-cases-3.md X03).
      return "the user lacks the offline_access role at \(host); or remove offline_access from scopes for a "
        + "session-bound refresh token"
    case "unsupported_grant_type": return "\(host) does not offer this grant; use the other flow (--browser or --device-code)"
    case "invalid_request": return "check client-id, client-auth, redirect-port and the scopes of the account"
    case "redirect_uri_mismatch", "invalid_redirect_uri":
      return "register http://127.0.0.1:PORT/ as a redirect URI at \(host) and set redirect-port to PORT"
    default: return "check the account's settings in the config"
    }
  }
}
