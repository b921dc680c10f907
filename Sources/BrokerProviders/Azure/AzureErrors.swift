import BrokerCore

/// Classifies Entra ID error replies (protocols.md §2.7) by `error` and `suberror`, with the AADSTS
/// codes as evidence and for hints ("error codes are subject to change": never the only signal
/// that deletes a token).
enum AzureErrors {
  /// `suberror` values that ask for an interactive step while the refresh token itself stays good
  /// (msal4j `InteractionRequiredExceptionReason`; MSAL Python's hidden ones too, except
  /// `bad_token` and `token_expired`, which say the refresh token is dead).
  static let interactionSuberrors: Set<String> = [
    "basic_action", "additional_action", "message_only", "consent_required", "user_password_expired",
    "protection_policy_required", "client_mismatch", "device_authentication_failed",
  ]
  /// AADSTS codes of interactive requirements for one resource: MFA (50074, 50076, 50079), external
  /// MFA (50158), device registration and compliance (50097, 53000, 53001), Conditional Access
  /// (53003), password change (50125), consent (65001).
  static let interactionCodes: Set<Int> = [50072, 50074, 50076, 50079, 50097, 50125, 50158, 53003, 53004, 65001]
  /// AADSTS codes of Conditional Access refusing one resource to this device or client, whatever
  /// `error` carries them (Entra sends them as `invalid_grant` too): a compliant (53000), domain-joined
  /// (53001) or managed (530003) device, an approved client app (53002), a workplace-joined device
  /// (50129), a security policy (530032) or a failed Conditional Access check (50131). The grant
  /// lives on for other resources, and no sign-in on this machine satisfies them.
  static let policyCodes: [Int: String] = [
    53000: "a Conditional Access policy requires a compliant device for this resource",
    53001: "a Conditional Access policy requires a device joined to the organisation's domain for this resource",
    530003: "a Conditional Access policy requires a device managed by the organisation for this resource",
    53002: "a Conditional Access policy allows only approved client applications for this resource",
    50129: "a Conditional Access policy requires a workplace-joined device for this resource",
    530032: "a Conditional Access security policy blocks this resource",
    50131: "a Conditional Access policy refused this device or request for this resource",
  ]

  /// A failed refresh.
  ///
  /// `invalid_grant` means the refresh token is dead (`RefreshTokenRejected`) unless it carries an
  /// interaction `suberror`, a `claims` challenge or an interaction AADSTS code: Entra answers MFA
  /// and consent needs of one resource with `invalid_grant` + `basic_action` / `consent_required`,
  /// and the token still serves other resources, so those keep it (interface.md §6), exactly like
  /// `interaction_required`, `consent_required` and `login_required`: `.stepUpRequired` for the
  /// requested `scopes`, with the server's claims challenge. A Conditional Access code of
  /// `policyCodes` under any `error` is `.refusedByPolicy`: the refresh token kept as well.
  static func refreshError(_ reply: OAuthErrorReply, account: String, host: String, scopes: ScopeSet) -> any Error {
    if let throttle = throttle(reply, account: account, host: host) { return throttle }
    if let policy = policyRefusal(reply, account: account, scopes: scopes) { return policy }
    let stepUp = ProviderError.stepUpRequired(
      account: account, reason: interactionReason(reply), scopes: scopes.items, claims: reply.claims)
    switch reply.error {
    case "invalid_grant":
      if needsInteraction(reply) { return stepUp }
      let hint = codeHint(reply.numericCodes).map { ": " + $0 } ?? ""
      return RefreshTokenRejected(account: account, reason: "the refresh token was rejected (\(reply.summary)\(hint))")
    case "interaction_required", "consent_required", "login_required":
      return stepUp
    default:
      return requestError(reply, account: account, host: host)
    }
  }

  /// Any other error reply: transient server codes become `.unavailable`, the rest `.rejected`
  /// with what to fix.
  static func requestError(_ reply: OAuthErrorReply, account: String, host: String) -> ProviderError {
    if let throttle = throttle(reply, account: account, host: host) { return throttle }
    return OAuthErrors.requestError(
      reply, account: account, host: host, hint: codeHint(reply.numericCodes) ?? errorHint(reply.error))
  }

  /// AADSTS50196, Entra's request-loop detection: sent as `invalid_grant` to user-facing calls,
  /// but documented as throttling, not a dead grant (bug-cases-3.md X07; Microsoft's Entra
  /// breaking-changes notes): `.throttled` for the reply's `Retry-After`, else
  /// `ThrottleWait.requestLoopSeconds`. Nil for any other reply.
  static func throttle(_ reply: OAuthErrorReply, account: String, host: String) -> ProviderError? {
    guard reply.numericCodes.contains(50196) else { return nil }
    return .throttled(
      account: account, host: host, seconds: reply.retryAfter ?? ThrottleWait.requestLoopSeconds,
      reason: "Entra ID detected a request loop: \(reply.summary)")
  }

  /// `.refusedByPolicy` for a reply carrying one of `policyCodes` (the first such code names the
  /// requirement), else nil.
  static func policyRefusal(_ reply: OAuthErrorReply, account: String, scopes: ScopeSet) -> ProviderError? {
    guard let what = reply.numericCodes.lazy.compactMap({ policyCodes[$0] }).first else { return nil }
    return .refusedByPolicy(account: account, reason: "\(what) (\(reply.summary))", scopes: scopes.items)
  }

  /// AADSTS codes with which Entra refuses a device-code sign-in by policy after the user
  /// approved it: Conditional Access blocking the flow (53003), the device-code mechanism not
  /// allowed (50005), and the device requirements of `policyCodes` (the device that approves is
  /// not the one that gets the token, so no device policy passes).
  static let deviceCodeBlockCodes: Set<Int> = Set(policyCodes.keys).union([53003, 50005])

  /// `.deviceCodeBlocked` for a device-code poll answered with one of `deviceCodeBlockCodes`
  /// under any `error` (`access_denied` and `invalid_grant` both occur), else nil.
  static func deviceCodeRefusal(_ reply: OAuthErrorReply, account: String, redirectPort: Int?) -> ProviderError? {
    guard reply.numericCodes.contains(where: deviceCodeBlockCodes.contains) else { return nil }
    return .deviceCodeBlocked(account: account, reason: reply.summary, redirectPort: redirectPort)
  }

  static func needsInteraction(_ reply: OAuthErrorReply) -> Bool {
    if let s = reply.suberror, interactionSuberrors.contains(s) { return true }
    return reply.hasClaims || reply.numericCodes.contains(where: interactionCodes.contains)
  }

  static func interactionReason(_ reply: OAuthErrorReply) -> String {
    let codes = Set(reply.numericCodes)
    let what: String
    if codes.contains(65001) || reply.error == "consent_required" || reply.suberror == "consent_required" {
      what = "consent is needed for these scopes"
    } else if !codes.isDisjoint(with: [50074, 50076, 50079, 50158]) {
      what = "multi-factor authentication is needed for this resource"
    } else if codes.contains(53004) || codes.contains(50072) {
      what = "multi-factor authentication must be registered for this account"
    } else if codes.contains(53003) {
      what = "a Conditional Access policy requires an interactive sign-in or blocks it"
    } else if reply.hasClaims {
      what = "the resource asks for a new sign-in (claims challenge)"
    } else {
      what = "an interactive sign-in is needed for this resource"
    }
    return "\(what) (\(reply.summary))"
  }

  /// What to do about well-known AADSTS codes (protocols.md §2.1, §2.3–2.5).
  static func codeHint(_ codes: [Int]) -> String? {
    for code in codes {
      switch code {
      case 50173, 50089, 50132, 50133, 70043: return "it was revoked or its session ended"
      case 70008, 700082: return "it expired after a long time unused"
      case 700084: return "it expired (24 h single-page-app limit)"
      case 7000218:
        return "enable 'Allow public client flows' in the app registration (Authentication page), or check client-id"
      case 700016: return "the application (client-id) was not found in the tenant; check client-id and tenant"
      case 70011: return "check the scopes of the account (or --scope)"
      case 90002: return "the tenant was not found; check tenant"
      case 50194: return "the app is single-tenant; set tenant to its tenant ID or domain"
      case 9002331, 9002332: return "the app does not accept this kind of account; check tenant (organizations or consumers)"
      case 9001023: return "this grant needs a specific tenant; set tenant to the tenant ID or domain"
      case 700025: return "the app is a public client; no client secret may be sent"
      default: continue
      }
    }
    return nil
  }

  static func errorHint(_ error: String) -> String {
    switch error {
    case "invalid_client": return "check client-id, and that the app registration allows public client flows"
    case "unauthorized_client": return "check that the app registration (client-id) allows public client flows"
    case "invalid_scope": return "check the scopes of the account (or --scope)"
    case "invalid_request": return "check tenant, client-id and scopes of the account"
    case "unsupported_grant_type": return "check tenant and the endpoints configured for the account"
    case "invalid_resource": return "check the resource named in the scopes"
    case "invalid_grant": return "run 'tokenbroker login' for the account again"
    default: return "check the account's settings in the config"
    }
  }
}
