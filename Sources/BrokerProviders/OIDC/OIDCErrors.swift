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
