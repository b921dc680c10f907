import BrokerCore

/// A usable answer from an OAuth endpoint: a 2xx body, or an OAuth error reply.
enum EndpointReply: Sendable {
  /// A 2xx answer; the body is not checked yet.
  case success([UInt8])
  /// A JSON error reply (RFC 6749 §5.2) with any status but 5xx (and 429 other than polling
  /// signals), classified by its `error` field, never by the status.
  case error(OAuthErrorReply)
}

/// The result of one attempt.
enum EndpointExchange: Sendable {
  case reply(EndpointReply)
  /// Worth another try: 5xx, 408, timeouts and connection failures. `what` names the failure,
  /// `remedy` what the user can do; `retryAfter` is the server's `Retry-After` in seconds, capped.
  case transient(what: String, remedy: String, retryAfter: Double?)
  /// HTTP 429 other than a polling signal: the server asks the client to slow down. Never retried
  /// at once (retries prolong a throttle, bug-cases-3.md X07): `seconds` is how long the server
  /// asked for (`ThrottleWait`), nil when it named no time.
  case throttled(what: String, seconds: Int?)
  /// Not worth another try, and not an OAuth reply (a TLS failure, a bare 400/401).
  case failed(ProviderError)
  /// An answer that is not the OAuth server's JSON (a proxy's or portal's page, a redirect, which
  /// is never followed): `error` says so; device polling tolerates a few in a row (bug-cases-3.md X06).
  case stray(status: Int, error: ProviderError)
}

/// Form POSTs to a provider's token-style endpoints (RFC 6749 §3.2, §4.1.3; RFC 8628 §3.1; RFC
/// 7009 §2.1) with the client's authentication: JSON reply and error decoding, and bounded
/// retries. Every provider's every flow goes through one of these (the grant helpers are in
/// `TokenEndpointClient+Grants.swift`).
struct TokenEndpointClient: Sendable {
  let transport: any HTTPTransport
  let time: any TimeSource
  /// Extra CA bundles: `[broker] ca-file` then the account's `ca-file`.
  let caFiles: [String]
  /// The account the requests are for, for messages.
  let account: String
  /// Attempts in all for transient failures.
  var maxAttempts = 3
  /// Upper bound for a server's `Retry-After`, in seconds.
  var maxRetryAfter: Double = 30
  /// Set while the caller holds a cached token that stays valid if this request fails
  /// (`TokenService.accessToken`, interface.md §6): one attempt with short timeouts
  /// (`shortTimeouts`), no retries, so no caller waits out a blip for a token it already has.
  @TaskLocal static var shortAttempt = false
  /// Connect and total timeouts of a short attempt, in seconds.
  static let shortTimeouts = (connect: 5, total: 10)

  init(transport: any HTTPTransport, time: any TimeSource, caFiles: [String], account: String) {
    self.transport = transport
    self.time = time
    self.caFiles = caFiles
    self.account = account
  }

  /// POSTs `fields` as `client`, retrying transient failures with backoff (1 s, 2 s, … or
  /// `Retry-After`); a 429 is not retried.
  /// - Parameter secrets: secret values among `fields`, redacted from any text shown (the
  ///   client's secret is added).
  /// - Throws: `ProviderError.unavailable` after the last attempt or for a reply that is not OAuth
  ///   JSON; `.throttled` for a 429 (the server's wait, or `ThrottleWait.defaultSeconds`);
  ///   `.refusedWithoutReason` for a 400/401 without an OAuth error body; `CancellationError`.
  func post(
    url: String, fields: [(String, String)], client: ClientAuthentication, secrets: [String], expectsJSON: Bool = true
  ) async throws -> EndpointReply {
    var attempt = 1
    let maxAttempts = Self.shortAttempt ? 1 : self.maxAttempts
    while true {
      switch try await exchange(url: url, fields: fields, client: client, secrets: secrets, expectsJSON: expectsJSON) {
      case .reply(let reply): return reply
      case .failed(let error), .stray(_, let error): throw error
      case .throttled(let what, let seconds):
        throw ProviderError.throttled(
          account: account, host: Self.host(of: url), seconds: seconds ?? ThrottleWait.defaultSeconds, reason: what)
      case .transient(let what, let remedy, let retryAfter):
        guard attempt < maxAttempts else {
          let tries = maxAttempts == 1 ? "" : " after \(maxAttempts) attempts"
          throw ProviderError.unavailable(host: Self.host(of: url), detail: "\(what)\(tries); \(remedy)")
        }
        try await time.sleep(seconds: retryAfter ?? Double(1 << (attempt - 1)))
        attempt += 1
      }
    }
  }

  /// One POST, classified. A 3xx is `.stray` and never followed (the transport follows none): a
  /// 307/308 would re-send the body, and with it a refresh token or code, to whoever redirected.
  /// - Parameter expectsJSON: a non-empty 2xx body that is not a JSON object is `.stray` (false for
  ///   revocation, whose 2xx body RFC 7009 §2.2 says to ignore).
  /// - Throws: `HTTPError.libraryUnavailable` (see `classify`), `CancellationError` and any error
  ///   of the transport that is not an `HTTPError`.
  func exchange(
    url: String, fields: [(String, String)], client: ClientAuthentication, secrets: [String], expectsJSON: Bool = true
  ) async throws -> EndpointExchange {
    let host = Self.host(of: url)
    let (body, headers) = client.apply(to: fields)
    var request = HTTPRequest.form(url: url, fields: body, caFiles: caFiles)
    request.headers += headers
    if Self.shortAttempt {
      request.connectTimeout = min(request.connectTimeout, Self.shortTimeouts.connect)
      request.totalTimeout = min(request.totalTimeout, Self.shortTimeouts.total)
    }
    let secrets = secrets + client.secrets
    var response: HTTPResponse
    do {
      response = try await transport.send(request)
    } catch let error as HTTPError {
      return try Self.classify(error, host: host)
    }
    let status = response.status
    let contentType = response.header("Content-Type")
    // GitHub answers form-encoded where a request lacks `Accept: application/json` (interface.md
    // §2.2: a reply is read by its Content-Type): its fields are read as a JSON object's.
    if Self.mediaType(contentType) == "application/x-www-form-urlencoded" { response.body = FormReply.json(response.body) }
    if (300..<400).contains(status) {
      return .stray(status: status, error: Self.redirected(host: host, status: status, location: response.header("Location")))
    }
    let wait = ThrottleWait.seconds(response, now: time.now)
    var oauth = OAuthErrorReply.parse(response.body, status: status, secrets: secrets)
    oauth?.retryAfter = wait
    if (200..<300).contains(status) {
      // "Some unorthodox servers respond 200 in error case" (golang/oauth2): an `error` wins.
      if let oauth { return .reply(.error(oauth)) }
      // Whatever the Content-Type says (text/plain JSON is accepted), the body decides.
      if expectsJSON && !response.body.isEmpty && JSONFields.parse(response.body) == nil {
        noteBody(response, host: host, secrets: secrets)
        return .stray(status: status, error: Self.unexpectedReply(host: host, status: status, contentType: contentType))
      }
      return .reply(.success(response.body))
    }
    let pollingSignal = oauth.map { ["slow_down", "authorization_pending"].contains($0.error) } ?? false
    if status == 429 && !pollingSignal {
      return .throttled(what: "HTTP 429" + (oauth.map { ", \($0.summary)" } ?? ""), seconds: wait)
    }
    if status >= 500 || status == 408 {
      let what = "HTTP \(status)" + (oauth.map { " (\($0.summary))" } ?? "")
      return .transient(what: what, remedy: "try again later", retryAfter: retryAfter(response))
    }
    if let oauth { return .reply(.error(oauth)) }
    if status == 400 || status == 401 {
      return .failed(.refusedWithoutReason(account: account, host: host, status: status))  // interface.md §6
    }
    noteBody(response, host: host, secrets: secrets)
    return .stray(status: status, error: Self.unexpectedReply(host: host, status: status, contentType: contentType))
  }

  /// `--verbose`: one neutralised line of a body that is not the server's JSON (`Redaction.bodyLine`).
  func noteBody(_ response: HTTPResponse, host: String, secrets: [String]) {
    guard !response.body.isEmpty else { return }
    transport.diagnostics.note(
      "reply body from \(host) (HTTP \(response.status), \(response.body.count) bytes): "
        + Redaction.bodyLine(response.body, redacting: secrets))
  }

  /// `Retry-After` in seconds (RFC 9110 §10.2.3), capped; nil when absent or an HTTP date.
  func retryAfter(_ response: HTTPResponse) -> Double? {
    guard let text = response.header("Retry-After"), let seconds = Double(text.trimmingSpaces()),
      seconds.isFinite
    else { return nil }
    return min(max(0, seconds), maxRetryAfter)
  }

  /// What a failure below HTTP is to every provider flow (token, device and revocation endpoints
  /// here, discovery in `OIDCDiscovery`): worth another try, or the provider's unavailability.
  /// - Throws: `HTTPError.libraryUnavailable` as it is: no request can be made at all, which is
  ///   nothing the provider did and not worth a retry; BrokerCLI's `ErrorMapping` says it (exit 4,
  ///   what to install) the same way from every flow.
  static func classify(_ error: HTTPError, host: String) throws(HTTPError) -> EndpointExchange {
    switch error {
    case .libraryUnavailable: throw error
    case .invalidURL, .insecureURL, .tls, .caFile: return .failed(.unavailable(host: host, detail: error.description))
    case .timedOut: return .transient(what: "no answer in time", remedy: "try again later", retryAfter: nil)
    case .cannotConnect:
      return .transient(what: "cannot connect", remedy: "check the network and proxy settings", retryAfter: nil)
    case .cannotResolve:
      return .transient(
        what: "cannot resolve the host name", remedy: "check the network, DNS and proxy settings", retryAfter: nil)
    case .other(_, let detail):
      return .transient(what: "the request failed (\(detail))", remedy: "try again later", retryAfter: nil)
    }
  }

  /// `host[:port]` of `url`, for messages (never the path or query).
  static func host(of url: String) -> String { EndpointURL(url)?.authority ?? "the configured endpoint" }

  /// A reply that is not the JSON an OAuth endpoint sends: typically a proxy's or portal's page.
  /// - Parameter contentType: the reply's `Content-Type`; only its media type is shown.
  static func unexpectedReply(host: String, status: Int, contentType: String? = nil) -> ProviderError {
    .unavailable(
      host: host,
      detail: "unexpected reply from \(host) (HTTP \(status), \(mediaType(contentType)), not JSON); "
        + "a proxy or portal may be intercepting")
  }

  /// A 2xx whose body is not the reply it should be (empty, or JSON without `lacking`).
  static func incompleteReply(host: String, lacking: String) -> ProviderError {
    .unavailable(
      host: host, detail: "unexpected reply from \(host) (HTTP 200 without \(lacking)); a proxy or portal may be intercepting")
  }

  /// A 3xx to a token-style endpoint, not followed; names where it pointed (host only).
  static func redirected(host: String, status: Int, location: String?) -> ProviderError {
    let target = location.flatMap { EndpointURL($0)?.authority }.map { "a redirect to \($0)" } ?? "a redirect"
    return .unavailable(
      host: host,
      detail: "unexpected reply from \(host) (HTTP \(status), \(target), not followed: the request is never re-sent "
        + "elsewhere); a proxy or single sign-on portal may be intercepting, check the endpoint and proxy settings")
  }

  /// The media type of a `Content-Type` value (`text/html`), lower-case, safe to show.
  static func mediaType(_ contentType: String?) -> String {
    let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~/")
    guard let first = contentType?.split(separator: ";", maxSplits: 1).first,
      case let value = String(first).trimmingSpaces().lowercased(), !value.isEmpty, value.count <= 80,
      value.allSatisfy(allowed.contains)
    else { return "no Content-Type" }
    return value
  }
}
