import BrokerCore

/// The Compute Engine metadata server paths that google-auth, the Cloud client libraries and
/// gcloud read (reference: protocols-2.md §2.4–2.6), served for one Google user account: pure
/// request-to-reply logic; the socket side is `EndpointServer`.
///
/// Every request needs `Metadata-Flavor: Google` (and no `X-Forwarded-For`, as the real server
/// refuses proxied requests) and every reply carries it. Under `/computeMetadata/v1/`:
/// `instance/service-accounts/{default|EMAIL}/` (`?recursive=true`: `{"aliases","email","scopes"}`),
/// `…/token[?scopes=a,b]` (`{"access_token","expires_in","token_type"}`, `expires_in` an integer),
/// `…/email`, `…/scopes`, `…/aliases`, `project/project-id` (404 without `project`),
/// `universe/universe-domain`; `/` is the ping. Anything else is 404.
public struct GoogleMetadataEndpoint: Sendable {
  static let root = "/computeMetadata/v1/"
  static let flavor = (name: "Metadata-Flavor", value: "Google")

  /// The account's configured scopes (reported at `…/scopes`, used when a request names none).
  let scopes: [String]
  /// `project`, or nil.
  let project: String?
  /// A token for the scopes (nil: the account's), or why there is none.
  let token: @Sendable (_ scopes: [String]?) async -> Result<EndpointToken, EndpointFailure>
  /// The signed-in user's email (the service account's email on GCE), or why it is unknown.
  let email: @Sendable () async -> Result<String, EndpointFailure>
  /// Unix seconds now (for `expires_in`).
  let now: @Sendable () -> Int64

  public init(
    scopes: [String], project: String?,
    token: @escaping @Sendable ([String]?) async -> Result<EndpointToken, EndpointFailure>,
    email: @escaping @Sendable () async -> Result<String, EndpointFailure>, now: @escaping @Sendable () -> Int64
  ) {
    self.scopes = scopes
    self.project = project
    self.token = token
    self.email = email
    self.now = now
  }

  public func answer(_ request: LoopbackRequest) async -> EndpointReply {
    guard request.header(Self.flavor.name) == Self.flavor.value else {
      return Self.text(403, "tokenbroker: missing Metadata-Flavor: Google header; send it with every request\n")
    }
    guard request.header("X-Forwarded-For") == nil else {
      return Self.text(403, "tokenbroker: requests through a proxy (X-Forwarded-For) are refused\n")
    }
    guard request.method == "GET" || request.method == "HEAD" else { return Self.text(405, "Method Not Allowed\n") }
    if request.path == "/" { return Self.text(200, "computeMetadata/\n") }
    guard request.path.hasPrefix(Self.root) else { return Self.notFound }
    let rest = request.path.dropFirst(Self.root.count)
    let query = FormEncoding.parameters(request.query).compactMapValues(\.last)
    switch rest {
    case "", "/": return Self.text(200, "instance/\nproject/\nuniverse/\n")
    case "instance", "instance/": return Self.text(200, "service-accounts/\n")
    case "project/project-id": return project.map { Self.text(200, $0) } ?? Self.notFound
    case "universe/universe-domain": return Self.text(200, "googleapis.com")
    case "instance/service-accounts", "instance/service-accounts/":
      guard case .success(let address) = await email() else { return Self.text(200, "default/\n") }
      return Self.text(200, "default/\n\(address)/\n")
    default: break
    }
    let prefix = "instance/service-accounts/"
    guard rest.hasPrefix(prefix) else { return Self.notFound }
    let parts = rest.dropFirst(prefix.count).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    let leaf = parts.count > 1 ? String(parts[1]) : ""
    let account = String(parts[0])
    if account != "default" {
      switch await email() {
      case .failure(let f): return Self.failure(f)
      case .success(let address): guard account.lowercased() == address.lowercased() else { return Self.notFound }
      }
    }
    return await serviceAccount(leaf, recursive: query["recursive"] == "true", scopes: query["scopes"])
  }

  /// The reply for `instance/service-accounts/ACCOUNT/LEAF` once ACCOUNT is known to be ours.
  private func serviceAccount(_ leaf: String, recursive: Bool, scopes requested: String?) async -> EndpointReply {
    switch leaf {
    case "":
      guard recursive else { return Self.text(200, "aliases\nemail\nscopes\ntoken\n") }
      switch await email() {
      case .failure(let f): return Self.failure(f)
      case .success(let address):
        struct Doc: Encodable {
          var aliases: [String]
          var email: String
          var scopes: [String]
        }
        return Self.json(200, JSONText.encode(Doc(aliases: ["default"], email: address, scopes: scopes)))
      }
    case "email":
      switch await email() {
      case .failure(let f): return Self.failure(f)
      case .success(let address): return Self.text(200, address)
      }
    case "aliases": return Self.text(200, "default\n")
    case "scopes": return Self.text(200, scopes.map { $0 + "\n" }.joined())
    case "token":
      // Comma-joined (Python, Go, Java); spaces are accepted too.
      let list = (requested ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
      switch await token(list.isEmpty ? nil : list) {
      case .failure(let f): return Self.failure(f)
      case .success(let t):
        struct Doc: Encodable {
          var access_token: String
          var expires_in: Int64
          var token_type: String
        }
        let left = max(1, t.expiresOn - now())
        return Self.json(200, JSONText.encode(Doc(access_token: t.accessToken.revealed, expires_in: left, token_type: "Bearer")))
      }
    default: return Self.notFound
    }
  }

  static let notFound = text(404, "Not Found\n")

  /// Sign-in needed: 403 (not retried by the libraries); provider down or anything else: 502
  /// (google-auth retries 500 and 503 five times, which would only repeat tokenbroker's own retries).
  static func failure(_ f: EndpointFailure) -> EndpointReply {
    text(f.kind == .signInRequired ? 403 : 502, "tokenbroker: " + f.message + "\n")
  }

  static func text(_ status: Int, _ body: String) -> EndpointReply { .text(status, body, headers: [flavor]) }
  static func json(_ status: Int, _ body: String) -> EndpointReply { .json(status, body, headers: [flavor]) }
}
