import BrokerCore

/// What one poll of the token endpoint said (RFC 8628 §3.5). Terminal answers (declined, expired,
/// rejected) are thrown as `ProviderError` by the poll itself.
enum PollOutcome: Sendable {
  case granted(TokenGrant)
  /// `authorization_pending`: ask again after `interval`.
  case pending
  /// `slow_down`, or a 429 (Auth0 and Okta throttle polling so): add 5 s to the interval, or take
  /// the server's `interval` if larger, and wait at least `retryAfter` seconds this once.
  case slowDown(serverInterval: Int?, retryAfter: Int? = nil)
  /// 5xx, 429, timeouts, connection failures: ask again later, never sooner than `interval`.
  case transient(what: String, remedy: String, retryAfter: Double?)
  /// An answer that is not the OAuth server's (a proxy's page, a redirect): asked again like a
  /// transient failure, but `strayLimit` in a row end the sign-in (bug-cases-3.md X06).
  case stray(status: Int, error: ProviderError)
}

/// The RFC 8628 §3.4–3.5 polling loop, shared by every provider's device flow.
///
/// The first poll goes out at once (as MSAL does); after that the gap is `interval` seconds, grown
/// by 5 s on each `slow_down` (or to the server's `interval` when that is larger), and doubled up to
/// 60 s after a transient failure (RFC 8628 §3.5: reduce the polling frequency on connection
/// timeouts). The loop ends at min(`issuedAt + expiresIn`, start + `timeout`); all waiting goes
/// through `TimeSource.sleep`.
struct DeviceCodePolling: Sendable {
  let account: String
  let time: any TimeSource
  /// RFC 8628 §3.5: "the interval MUST be increased by 5 seconds for all subsequent requests".
  static let slowDownStep = 5.0
  /// Transient failures double the gap up to this many seconds.
  static let transientCap = 60.0
  /// This many stray answers in a row (a wrong `token-endpoint` answering 404 pages) end the
  /// sign-in; fewer are taken as a proxy's passing trouble (git-credential-oauth#114).
  static let strayLimit = 3

  /// Polls until `poll` grants, throws, or the deadline passes.
  /// - Parameters:
  ///   - timeout: seconds from now (`login-timeout`).
  ///   - host: the token endpoint's host, for messages.
  ///   - endpoint: the token endpoint's URL, named (without its query) when `strayLimit` stray
  ///     answers in a row end the sign-in.
  /// - Throws: what `poll` throws; `ProviderError.loginFailed` (exit 6) after `strayLimit` stray
  ///   answers in a row; at the deadline `.deviceCodeExpired` (the code's life ended first),
  ///   `.loginTimedOut`, or `.unavailable` when the last poll failed transiently or strayed.
  func run(
    _ authorization: DeviceAuthorization, timeout: Int, host: String, endpoint: String = "",
    poll: @Sendable () async throws -> PollOutcome
  ) async throws -> TokenGrant {
    let expiry = authorization.issuedAt + Int64(authorization.expiresIn)
    let timeoutAt = time.now + Int64(max(0, timeout))
    let deadline = min(expiry, timeoutAt)
    var interval = Double(max(1, authorization.interval))
    var lastFailure: (what: String, remedy: String)?
    var strays = 0

    func deadlineError() -> ProviderError {
      if let lastFailure {
        return .unavailable(host: host, detail: "\(lastFailure.what) until the sign-in timed out; \(lastFailure.remedy)")
      }
      return expiry <= timeoutAt ? .deviceCodeExpired(account: account) : .loginTimedOut(account: account, seconds: timeout)
    }

    while true {
      try Task.checkCancellation()
      if time.now >= deadline { throw deadlineError() }
      var gap: Double
      let outcome = try await poll()
      if case .stray = outcome {} else { strays = 0 }
      switch outcome {
      case .granted(let grant):
        return grant
      case .pending:
        lastFailure = nil
        gap = interval
      case .stray(let status, _):
        strays += 1
        if strays >= Self.strayLimit {
          throw ProviderError.loginFailed(
            account: account,
            reason: "the token endpoint \(Self.shown(endpoint, host: host)) answered HTTP \(status) without OAuth JSON "
              + "\(strays) times in a row; check token-endpoint and the proxy settings")
        }
        lastFailure = ("HTTP \(status) without OAuth JSON", "a proxy or portal may be intercepting, check the proxy settings")
        gap = interval
      case .slowDown(let serverInterval, let retryAfter):
        lastFailure = nil
        interval = max(interval + Self.slowDownStep, Double(serverInterval ?? 0))
        gap = max(interval, Double(retryAfter ?? 0))
      case .transient(let what, let remedy, let retryAfter):
        lastFailure = (what, remedy)
        interval = min(interval * 2, max(interval, Self.transientCap))
        gap = max(interval, retryAfter ?? 0)
      }
      let remaining = Double(deadline - time.now)
      if remaining <= gap {
        if remaining > 0 { try await time.sleep(seconds: remaining) }
        throw deadlineError()
      }
      try await time.sleep(seconds: gap)
    }
  }

  /// `endpoint` as `scheme://authority/path` (no query), else `host`.
  static func shown(_ endpoint: String, host: String) -> String {
    guard let url = EndpointURL(endpoint) else { return host }
    let path = url.path.prefix { $0 != "?" && $0 != "#" }
    return String("\(url.scheme)://\(url.authority)\(path)".prefix(200))
  }

  /// Maps the RFC 8628 §3.5 error codes (and Microsoft's `authorization_declined`); nil for any
  /// other `error`, which the provider classifies.
  /// - Throws: `ProviderError.declined`, `.deviceCodeExpired`, `.rejected` (`bad_verification_code`).
  static func outcome(for reply: OAuthErrorReply, account: String) throws(ProviderError) -> PollOutcome? {
    switch reply.error {
    case "authorization_pending": return .pending
    case "slow_down": return .slowDown(serverInterval: reply.interval)
    case "authorization_declined", "access_denied": throw .declined(account: account)
    case "expired_token": throw .deviceCodeExpired(account: account)
    case "bad_verification_code":
      let evidence = reply.evidence.isEmpty ? "" : " (\(reply.evidence))"
      throw .rejected(
        account: account, error: reply.error,
        detail: "the provider did not accept the device code; run 'tokenbroker login \(account)' again\(evidence)")
    default: return nil
    }
  }
}
