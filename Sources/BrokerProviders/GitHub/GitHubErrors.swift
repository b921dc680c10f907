import BrokerCore

/// GitHub's error codes (GitHub Docs, "Authorizing OAuth apps": the device flow's error codes;
/// "Troubleshooting OAuth app access token request errors"; "Refreshing user access tokens"),
/// read whatever the HTTP status (GitHub answers token errors with 200).
enum GitHubErrors {
  /// An error reply during a sign-in (device request, device polling, code redemption).
  /// `device_flow_disabled` (the app has not enabled the device flow) and `unauthorized_client`
  /// on the device request end it (exit 6) naming `--browser`; `incorrect_device_code` and
  /// `bad_verification_code` end it too; `incorrect_client_credentials` is a wrong client id or
  /// secret (exit 64); the rest as `OAuthErrors.requestError`.
  static func signInError(_ reply: OAuthErrorReply, account: String, host: String) -> any Error {
    switch reply.error {
    case "device_flow_disabled", "unauthorized_client":
      return ProviderError.loginFailed(
        account: account,
        reason: "\(host) has the device flow disabled for this app (\(reply.error)); run 'tokenbroker login \(account) "
          + "--browser', or enable Device Flow in the app's settings")
    case "incorrect_device_code", "bad_verification_code":
      return ProviderError.loginFailed(account: account, reason: "\(host) did not accept the code (\(reply.summary))")
    case "incorrect_client_credentials":
      return wrongClient(reply, account: account, host: host)
    default:
      return OAuthErrors.requestError(reply, account: account, host: host, hint: hint(reply.error, host: host))
    }
  }

  /// A failed refresh: `bad_refresh_token` ("the refresh token passed is incorrect or expired")
  /// and `invalid_grant` are that grant dead; `incorrect_client_credentials` is the client's
  /// configuration (nothing deleted); the rest keep the refresh token.
  static func refreshError(_ reply: OAuthErrorReply, account: String, host: String, scopes: ScopeSet) -> any Error {
    switch reply.error {
    case "bad_refresh_token", "invalid_grant":
      return RefreshTokenRejected(account: account, reason: "the refresh token was rejected at \(host) (\(reply.summary))")
    case "incorrect_client_credentials":
      return wrongClient(reply, account: account, host: host)
    default:
      return OAuthErrors.refreshError(reply, account: account, host: host, hint: hint(reply.error, host: host), scopes: scopes)
    }
  }

  static func wrongClient(_ reply: OAuthErrorReply, account: String, host: String) -> ProviderError {
    .rejected(
      account: account, error: reply.error,
      detail: "check client-id and client-secret against the app registered at \(host) (a GitHub App's client ID is "
        + "not its app ID)")
  }

  static func hint(_ error: String, host: String) -> String {
    switch error {
    case "redirect_uri_mismatch":
      return "register http://127.0.0.1/ as the app's callback URL at \(host)"
    case "unverified_user_email": return "verify the account's primary email address at \(host), then sign in again"
    case "unsupported_grant_type": return "\(host) does not offer this grant; use the other flow (--browser or --device-code)"
    default: return "check the account's settings in the config"
    }
  }
}
