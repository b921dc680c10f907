import BrokerCore

/// The Azure App Service managed identity protocol, api-version 2019-08-01, as azure-identity,
/// MSAL and azidentity call it (reference: protocols-2.md §2.1, §2.3): pure request-to-reply
/// logic; the socket side is `EndpointServer`.
///
/// `GET /msi/token?api-version=2019-08-01&resource=R` with `X-IDENTITY-HEADER: <IDENTITY_HEADER>`
/// is answered with the account's token for scope `R/.default` (R exactly as received, so
/// `https://management.core.windows.net/` asks for `…windows.net//.default`, as Azure CLI does):
/// `{"access_token","expires_on" (Unix seconds as a string),"resource","token_type"}`. Errors are
/// `{"statusCode","message","error","error_description"}`, the fields MSAL Python and MSAL.NET
/// read. `client_id`, `object_id`, `principal_id` and `mi_res_id` (a user-assigned identity) are
/// accepted and ignored: the one identity served is the signed-in user's.
public struct AppServiceEndpoint: Sendable {
  /// The path `IDENTITY_ENDPOINT` names.
  public static let path = "/msi/token"
  public static let apiVersion = "2019-08-01"

  /// The secret the child gets as `IDENTITY_HEADER`; every request must carry it.
  let identityHeader: Secret
  /// The token for one v2 scope (`resource/.default`), or why there is none.
  let token: @Sendable (_ scope: String) async -> Result<EndpointToken, EndpointFailure>

  public init(
    identityHeader: Secret, token: @escaping @Sendable (_ scope: String) async -> Result<EndpointToken, EndpointFailure>
  ) {
    self.identityHeader = identityHeader
    self.token = token
  }

  /// The reply to one request. Checks path, method, header, api-version and resource in that
  /// order; only a request passing all of them reaches `token`.
  public func answer(_ request: LoopbackRequest) async -> EndpointReply {
    guard request.path == Self.path else { return Self.error(404, "invalid_request", "no such path; the token path is \(Self.path)") }
    guard request.method == "GET" else { return Self.error(405, "invalid_request", "only GET is served") }
    guard let header = request.header("X-IDENTITY-HEADER"), identityHeader.matches(header) else {
      return Self.error(401, "unauthorized_client", "missing or wrong X-IDENTITY-HEADER; use the IDENTITY_HEADER value")
    }
    let query = FormEncoding.parameters(request.query).compactMapValues(\.last)
    guard query["api-version"] == Self.apiVersion else {
      return Self.error(400, "invalid_request", "api-version must be \(Self.apiVersion)")
    }
    guard let resource = query["resource"], !resource.isEmpty, !resource.contains(where: { $0 == " " || $0.isNewline })
    else {
      return Self.error(400, "invalid_request", "missing or malformed 'resource' (one resource URI or application ID)")
    }
    switch await token(resource + "/.default") {
    case .success(let t):
      struct Doc: Encodable {
        var access_token, expires_on, resource, token_type: String
      }
      return .json(
        200,
        JSONText.encode(
          Doc(access_token: t.accessToken.revealed, expires_on: String(t.expiresOn), resource: resource, token_type: "Bearer")))
    case .failure(let f):
      switch f.kind {
      case .signInRequired: return Self.error(400, "interaction_required", f.message)
      case .unavailable: return Self.error(503, "temporarily_unavailable", f.message)
      case .failed: return Self.error(500, "server_error", f.message)
      }
    }
  }

  /// An error in the protocol's shape; `message` says what to do.
  static func error(_ status: Int, _ code: String, _ message: String) -> EndpointReply {
    struct Doc: Encodable {
      var statusCode: Int
      var message, error, error_description: String
    }
    let text = "tokenbroker: " + message
    return .json(status, JSONText.encode(Doc(statusCode: status, message: text, error: code, error_description: text)))
  }
}
