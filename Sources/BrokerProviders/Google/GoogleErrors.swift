import BrokerCore

/// Classifies Google's error replies (protocols.md §3.3, §3.5) like `AzureErrors` does Entra's.
enum GoogleErrors {
  /// A failed refresh: `invalid_grant` means the refresh token is dead (revoked, expired, unused
  /// for six months, password changed) unless its `error_subtype` is `invalid_rapt`: Google then
  /// wants the user to reauthenticate, and the token itself stays good (interface.md §6).
  static func refreshError(_ reply: OAuthErrorReply, account: String, host: String) -> any Error {
    guard reply.error == "invalid_grant" else { return requestError(reply, account: account, host: host) }
    if reply.suberror == "invalid_rapt" || (reply.detailLine ?? "").contains("invalid_rapt") {
      return ProviderError.signInRequired(
        account: account, reason: "Google asks you to sign in again to confirm it is you (\(reply.summary))")
    }
    return RefreshTokenRejected(account: account, reason: "the refresh token was rejected (\(reply.summary))")
  }

  /// Any other error reply: transient server codes become `.unavailable`, the rest `.rejected`.
  /// - Parameter deviceFlow: the request came from the device flow (other client, scope allow-list).
  static func requestError(_ reply: OAuthErrorReply, account: String, host: String, deviceFlow: Bool = false)
    -> ProviderError
  {
    OAuthErrors.requestError(reply, account: account, host: host, hint: hint(reply.error, deviceFlow: deviceFlow))
  }

  /// What to check for an `error` of Google's token or authorization endpoint.
  static func hint(_ error: String, deviceFlow: Bool = false) -> String {
    let client = deviceFlow ? "device-client-id and device-client-secret (a \"TVs and Limited Input devices\" client)" : "client-id and client-secret (a \"Desktop app\" client)"
    switch error {
    case "invalid_client", "unauthorized_client": return "check \(client)"
    case "invalid_scope":
      return deviceFlow
        ? "the device flow allows only some scopes; use the browser sign-in, or fewer scopes"
        : "check the scopes of the account (or --scope)"
    case "redirect_uri_mismatch": return "use a \"Desktop app\" OAuth client, which accepts loopback redirects"
    case "org_internal": return "the OAuth client belongs to another organisation; use a client of your own"
    case "admin_policy_enforced": return "your Google Workspace administrator blocks this client or these scopes"
    case "disallowed_useragent": return "open the URL in a regular browser"
    case "invalid_request": return "check \(client) and the scopes of the account"
    case "unsupported_grant_type": return "check the token-endpoint configured for the account"
    default: return "check the account's settings in the config"
    }
  }
}
