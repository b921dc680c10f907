import BrokerCore

/// One HTTP response of the SDK credential endpoints (interface.md §9): a status, a media type,
/// the protocol's own headers and a body. Always sent with `Connection: close` and `no-store`.
public struct EndpointReply: Sendable, Equatable {
  /// 200, 400, 401, 403, 404, 405, 500, 502, 503.
  public var status: Int
  /// `application/json` or `text/plain; charset=utf-8` (google-auth parses JSON only when the
  /// type says so).
  public var contentType: String
  /// Extra headers (`Metadata-Flavor: Google`), in a stable order.
  public var headers: [(name: String, value: String)]
  public var body: [UInt8]

  public init(status: Int, contentType: String, headers: [(name: String, value: String)] = [], body: [UInt8]) {
    self.status = status
    self.contentType = contentType
    self.headers = headers
    self.body = body
  }

  /// A JSON body (`text` is the encoded document).
  public static func json(_ status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> EndpointReply {
    EndpointReply(status: status, contentType: "application/json", headers: headers, body: Array(text.utf8))
  }

  /// A plain-text body.
  public static func text(_ status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> EndpointReply {
    EndpointReply(status: status, contentType: "text/plain; charset=utf-8", headers: headers, body: Array(text.utf8))
  }

  public static func == (a: EndpointReply, b: EndpointReply) -> Bool {
    a.status == b.status && a.contentType == b.contentType && a.body == b.body
      && a.headers.map { "\($0.name): \($0.value)" } == b.headers.map { "\($0.name): \($0.value)" }
  }

  /// The body as text (tests, diagnostics of error replies; never of a token reply).
  public var bodyText: String { String(decoding: body, as: UTF8.self) }

  /// The whole response on the wire (HTTP/1.1, closed after); without the body for `HEAD`.
  func wire(includeBody: Bool) -> [UInt8] {
    LoopbackWire.response(status: status, contentType: contentType, headers: headers, body: body, includeBody: includeBody)
  }
}

/// Why an endpoint has no token to give: the account needs a sign-in, the provider cannot be
/// reached, or anything else. `message` is tokenbroker's own one line (`what failed; what to do`,
/// naming `tokenbroker login ACCOUNT` for a sign-in); it never holds a token.
public struct EndpointFailure: Error, Sendable, Equatable {
  public enum Kind: Sendable, Equatable {
    /// Exit 3: not signed in, refresh token rejected, consent or MFA needed.
    case signInRequired
    /// Exit 4: provider or network unavailable.
    case unavailable
    /// Any other exit status (store locked, configuration).
    case failed
  }
  public var kind: Kind
  public var message: String

  public init(kind: Kind, message: String) {
    self.kind = kind
    self.message = message
  }
}

/// An access token as the endpoints hand it out.
public struct EndpointToken: Sendable, Equatable {
  public var accessToken: Secret
  /// Unix seconds.
  public var expiresOn: Int64

  public init(accessToken: Secret, expiresOn: Int64) {
    self.accessToken = accessToken
    self.expiresOn = expiresOn
  }
}
