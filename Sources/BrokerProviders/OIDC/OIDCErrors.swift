/// What to check for an OAuth `error` of an OpenID Provider (RFC 6749 §5.2, RFC 8628 §3.5).
enum OIDCErrors {
  static func hint(_ error: String, host: String) -> String {
    switch error {
    case "invalid_client":
      return "check client-id and client-secret, and client-auth (client_secret_basic, client_secret_post or none) "
        + "against the client registered at \(host)"
    case "unauthorized_client":
      return "the client registered at \(host) is not allowed this grant; enable it (device code, refresh token "
        + "or authorization code) for client-id there"
    case "invalid_scope": return "check the scopes of the account (or --scope) against what \(host) offers"
    case "unsupported_grant_type": return "\(host) does not offer this grant; use the other flow (--browser or --device-code)"
    case "invalid_request": return "check client-id, client-auth, redirect-port and the scopes of the account"
    case "redirect_uri_mismatch", "invalid_redirect_uri":
      return "register http://127.0.0.1:PORT/ as a redirect URI at \(host) and set redirect-port to PORT"
    default: return "check the account's settings in the config"
    }
  }
}
