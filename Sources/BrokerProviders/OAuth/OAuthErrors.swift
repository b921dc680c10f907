import BrokerCore

/// The RFC 6749 §5.2 classification every provider shares; the providers add their hints (what to
/// check) and their own codes (AADSTS, `invalid_rapt`).
enum OAuthErrors {
  /// `error` values that mean "the server is having trouble, try again later".
  static let transient: Set<String> = ["temporarily_unavailable", "server_error", "internal_failure"]

  /// Any error reply but a dead refresh token: transient server codes become `.unavailable`, the
  /// rest `.rejected` with `hint` (what to fix) and the reply's evidence.
  static func requestError(_ reply: OAuthErrorReply, account: String, host: String, hint: String) -> ProviderError {
    if transient.contains(reply.error) { return .unavailable(host: host, detail: "\(reply.summary); try again later") }
    let evidence = reply.evidence.isEmpty ? "" : " (\(reply.evidence))"
    return .rejected(account: account, error: reply.error, detail: hint + evidence)
  }

  /// A failed refresh at a server that follows the standard: `invalid_grant` is a dead refresh
  /// token; `interaction_required`, `consent_required` and `login_required` keep it (interface.md
  /// §6) and are a step-up for the requested `scopes`, with the server's claims challenge; the
  /// rest as `requestError`.
  static func refreshError(_ reply: OAuthErrorReply, account: String, host: String, hint: String, scopes: ScopeSet)
    -> any Error
  {
    switch reply.error {
    case "invalid_grant":
      return RefreshTokenRejected(account: account, reason: "the refresh token was rejected at \(host) (\(reply.summary))")
    case "interaction_required", "consent_required", "login_required":
      return ProviderError.stepUpRequired(
        account: account, reason: "\(host) asks for an interactive sign-in (\(reply.summary))", scopes: scopes.items,
        claims: reply.claims)
    default:
      return requestError(reply, account: account, host: host, hint: hint)
    }
  }
}
