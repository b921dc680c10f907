import BrokerCore

/// Classifies errors of a browser sign-in shared by every provider: the redirect's `error`
/// (RFC 6749 §4.1.2.1) and a refused authorization code at the token endpoint (§5.2).
enum AuthorizationErrors {
  /// - Parameters:
  ///   - host: the authorization endpoint's host, for `.unavailable`.
  ///   - hint: what to check for a `.rejected` error, from the provider (nil: a generic one).
  static func classify(_ info: AuthorizationErrorInfo, account: String, host: String, hint: String?) -> ProviderError {
    let evidence = info.detail.map { "\(info.error): \($0)" } ?? info.error
    switch info.error {
    case "access_denied", "authorization_declined", "consent_declined":
      return .declined(account: account)
    case "temporarily_unavailable", "server_error":
      return .unavailable(host: host, detail: "\(evidence); try again later")
    case "interaction_required", "login_required", "consent_required", "account_selection_required":
      return .loginFailed(account: account, reason: "the provider ended the sign-in (\(evidence))")
    default:
      return .rejected(
        account: account, error: info.error,
        detail: (hint ?? "check the account's client-id, scopes and the app registration") + " (\(evidence))")
    }
  }

  /// A refused code redemption: `invalid_grant` means the code did not fit (PKCE verifier
  /// mismatch, used twice, expired); anything else is left to the provider's classification.
  /// - Parameter reason: what the provider's codes say (e.g. AADSTS501481), or nil.
  static func refusedCode(_ reply: OAuthErrorReply, account: String, reason: String?) -> ProviderError? {
    guard reply.error == "invalid_grant" else { return nil }
    let what = reason ?? "the authorization code was refused (expired, used twice, or the PKCE verifier did not match)"
    return .loginFailed(account: account, reason: "\(what) (\(reply.summary))")
  }
}
