import BrokerCore

/// Why getting a token from an identity provider failed. Each case maps to one exit status
/// (interface.md §6, mapped in BrokerCLI's `ErrorMapping`); no payload ever holds a token, code,
/// device code or client secret (bug-cases.md B29).
public enum ProviderError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Exit 3. Not signed in (`reason` is exactly `not signed in`), the refresh token was rejected
  /// (`invalid_grant`), or the provider needs an interactive step for this resource
  /// (`interaction_required`, `consent_required`, claims challenges). `reason` names the OAuth
  /// error and AADSTS code, never a token.
  case signInRequired(account: String, reason: String)
  /// Exit 3. A refresh for `scopes` needs MFA or consent (`interaction_required`,
  /// `consent_required`, `invalid_grant` with an interaction `suberror`): the refresh token stays
  /// good for other resources, and `login ACCOUNT --scope S` (which sends `claims`, the server's
  /// challenge, when there is one) satisfies it. `reason` as for `.signInRequired`; `claims` is
  /// never shown.
  case stepUpRequired(account: String, reason: String, scopes: [String], claims: String?)
  /// Exit 3. A Conditional Access policy refuses `scopes` to this device or client (Entra's
  /// device-compliance and approved-app codes, sent as `invalid_grant` or `interaction_required`;
  /// interface.md §6): the refresh token stays good for other resources and is kept, and a new
  /// sign-in on this machine does not satisfy the policy. `reason` names the requirement and the
  /// AADSTS code, never a token.
  case refusedByPolicy(account: String, reason: String, scopes: [String])
  /// Exit 6. The organisation's policy refused a device-code sign-in after approval (Entra's
  /// AADSTS53003, 50005, or a device requirement: `AzureErrors.deviceCodeBlockCodes`). Nothing is
  /// stored; the browser flow works where the device code does not, over SSH through a forwarded
  /// `redirect-port` (`redirectPort`, the account's, nil when random). `reason` names the OAuth
  /// error and AADSTS code.
  case deviceCodeBlocked(account: String, reason: String, redirectPort: Int?)
  /// Exit 6. The user declined the sign-in (`authorization_declined`, `access_denied`; RFC 8628 §3.5).
  case declined(account: String)
  /// Exit 6. The device code expired (`expired_token`, or its `expires_in` passed) before approval.
  case deviceCodeExpired(account: String)
  /// Exit 6. The sign-in did not complete within `seconds` (`login-timeout`).
  case loginTimedOut(account: String, seconds: Int)
  /// Exit 6. The browser sign-in ended without tokens: the provider refused the authorization
  /// code (`invalid_grant`: PKCE verifier mismatch, code already used or expired) or the
  /// authorization endpoint answered with an interaction error. `reason` names the OAuth error and
  /// AADSTS code, never the code or verifier.
  case loginFailed(account: String, reason: String)
  /// Exit 4. The provider at `host` could not be used: 5xx or 429 after retries, a timeout or
  /// connection failure (`HTTPError`), or a reply that is not the JSON it should be (a proxy's
  /// HTML page). `detail` is one phrase of what happened and what to do.
  case unavailable(host: String, detail: String)
  /// Exit 4. The provider at `host` throttled requests for `account` (HTTP 429, or a reply it
  /// documents as throttling: Entra's AADSTS50196 request-loop detection; interface.md §6). No
  /// refresh of the account is sent for `seconds` more, by any caller; nothing is deleted.
  /// `reason` is what the provider said (the OAuth summary or the status), never a token.
  case throttled(account: String, host: String, seconds: Int, reason: String)
  /// Exit 1. The provider refused the request for a reason the user must fix in the config or the
  /// app registration (`invalid_client`, `invalid_scope`, `unauthorized_client`, …). `error` is the
  /// OAuth `error` value; `detail` says what to check and ends with the AADSTS code if there is one.
  case rejected(account: String, error: String, detail: String)
  /// Exit 3. The endpoint at `host` answered `status` (400 or 401) without an OAuth error body
  /// (interface.md §6): often a dead refresh token (Glewlwyd answers one so), else a client the
  /// server no longer knows. Nothing is deleted for it; a new sign-in helps if it persists.
  case refusedWithoutReason(account: String, host: String, status: Int)
  /// Exit 64. The token endpoint at `host` refused the client itself (`invalid_client`, RFC 6749
  /// §5.2: a rotated or wrong secret, a public client sent one, the wrong `client-auth`): a
  /// configuration problem, not a dead grant, so nothing is deleted and the same refresh token
  /// works once the config is fixed (bug-cases-3.md X05). `clientID` and `method` (`client-auth`'s
  /// value) are the ones sent, never the secret; `detail` is the provider's hint and evidence.
  case clientRejected(account: String, host: String, clientID: String, method: String, detail: String)
  /// Exit 64. A provider or flow that is not implemented yet; the text says what to use instead.
  case unsupported(String)

  /// The `reason` of `.signInRequired` when no refresh token is stored.
  public static let notSignedIn = "not signed in"

  /// `word` as one shell word: as it is when it holds only characters no shell treats specially
  /// (scopes are URLs and names), else in double quotes.
  static func shellWord(_ word: String) -> String {
    let plain = !word.isEmpty && word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/:._-+=@%,".contains($0)) }
    return plain ? word : "\"" + word.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("$", with: "\\$")
      .replacing("`", with: "\\`") + "\""
  }

  /// One line: what failed; what to do (interface.md §6).
  public var description: String {
    switch self {
    case .signInRequired(let account, let reason):
      if reason == ProviderError.notSignedIn {
        return "'\(account)' is not signed in; run 'tokenbroker login \(account)'"
      }
      return "sign-in needed for '\(account)': \(reason); run 'tokenbroker login \(account)'"
    case .stepUpRequired(let account, let reason, let scopes, _):
      let asked = scopes.map { " --scope " + ProviderError.shellWord($0) }.joined()
      return "sign-in needed for '\(account)' to use \(scopes.joined(separator: " ")): \(reason); "
        + "run 'tokenbroker login \(account)\(asked)'"
    case .refusedByPolicy(let account, let reason, let scopes):
      return "'\(account)' may not use \(scopes.joined(separator: " ")) from this machine: \(reason); "
        + "the sign-in is kept for its other resources, and a new 'tokenbroker login \(account)' here does not "
        + "satisfy the policy: use this resource from a device the organisation manages, or ask its administrator"
    case .deviceCodeBlocked(let account, let reason, let port):
      let shown = port.map(String.init) ?? "8400"
      let set = port == nil ? "set 'redirect-port = 8400' in [account \(account)], " : ""
      return "the organisation's policy refused the device-code sign-in to '\(account)' (\(reason)); "
        + "sign in with the browser instead: 'tokenbroker login \(account) --browser' where this machine has a "
        + "browser, else \(set)connect with 'ssh -L \(shown):127.0.0.1:\(shown) THIS-HOST', run "
        + "'tokenbroker login \(account) --browser --no-open' there and open the URL it prints in your own browser"
    case .declined(let account):
      return "the sign-in to '\(account)' was declined; run 'tokenbroker login \(account)' again and approve it"
    case .deviceCodeExpired(let account):
      return "the device code for '\(account)' expired before the sign-in was approved; "
        + "run 'tokenbroker login \(account)' again and enter the new code sooner"
    case .loginTimedOut(let account, let seconds):
      return "the sign-in to '\(account)' did not complete within \(seconds) s; "
        + "run 'tokenbroker login \(account)' again, or raise login-timeout in [broker]"
    case .loginFailed(let account, let reason):
      return "the sign-in to '\(account)' did not complete: \(reason); run 'tokenbroker login \(account)' again"
    case .unavailable(let host, let detail):
      return "the identity provider '\(host)' could not be used: \(detail)"
    case .throttled(let account, let host, let seconds, let reason):
      return "the identity provider '\(host)' is throttling requests for '\(account)' (\(reason)); "
        + "the sign-in is kept and nothing is sent for it for \(seconds) s; try again in \(seconds) s"
    case .rejected(let account, let error, let detail):
      return "the identity provider rejected the request for '\(account)' (\(error)); \(detail)"
    case .refusedWithoutReason(let account, let host, let status):
      return "\(host) refused the request for '\(account)' (HTTP \(status) without an OAuth error); "
        + "if it persists, run 'tokenbroker login \(account)'"
    case .clientRejected(let account, let host, let clientID, let method, let detail):
      return "\(host) rejected the client '\(clientID)' (client-auth \(method)) for '\(account)' (invalid_client); "
        + "\(detail); the sign-in is kept: fix client-id, client-secret, device-client-id, device-client-secret "
        + "or client-auth in the config"
    case .unsupported(let text):
      return text
    }
  }
}

/// Thrown by `OAuthProvider.refresh` when the provider rejected the refresh token itself
/// (RFC 6749 §5.2 `invalid_grant` without an interaction sub-error: expired, revoked, already
/// redeemed). `TokenService` handles it (interface.md §6: delete the item only if it still holds
/// this very token) and rethrows `ProviderError.signInRequired`; it never reaches the CLI.
public struct RefreshTokenRejected: Error, Sendable, Equatable, CustomStringConvertible {
  public var account: String
  /// E.g. `the refresh token was rejected (invalid_grant, AADSTS50173: …)`; never a token.
  public var reason: String
  public init(account: String, reason: String) {
    self.account = account
    self.reason = reason
  }
  /// The error the user sees.
  public var providerError: ProviderError { .signInRequired(account: account, reason: reason) }
  public var description: String { providerError.description }
}
