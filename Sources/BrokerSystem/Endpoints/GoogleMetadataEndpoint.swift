import BrokerCore

/// The Compute Engine metadata server paths that google-auth, the Cloud client libraries and
/// gcloud read (reference: protocols-2.md §2.4–2.6; interface.md §9), served for one Google user
/// account: pure request-to-reply logic; the socket side is `EndpointServer`.
///
/// Every request needs `Metadata-Flavor: Google` (and no `X-Forwarded-For`, as the real server
/// refuses proxied requests) and every reply carries it, errors included (gcp-metadata takes a 404
/// without it for a foreign server: bug-cases-3.md X09). Under `/computeMetadata/v1/`:
/// - `instance/service-accounts/{default|EMAIL}/` (`?recursive=true`: `{"aliases","email","scopes"}`),
///   `…/token[?scopes=a,b]` (`{"access_token","expires_in","token_type"}`, `expires_in` an integer
///   ≥ 1), `…/email`, `…/scopes`, `…/aliases`, `…/identity?audience=A` (the account's ID token,
///   as text, only for an audience it was issued to; otherwise 404 with one plain line);
/// - `instance/service-accounts/` (the listing `default/`, `EMAIL/`; `?recursive=true`: JSON keyed
///   by both names, as gcloud and Node read it);
/// - `project/project-id`, `project/numeric-project-id` (digits: gcloud decides "on Compute
///   Engine" from it, bug-cases-3.md X10), both 404 without `project`;
/// - `universe/universe-domain` and its older spelling `universe/universe_domain` (`googleapis.com`);
/// - the directories `""`, `instance/`, `project/`, `universe/` (listings, or JSON with
///   `?recursive=true` in the server's camelCase: `serviceAccounts`, `projectId`,
///   `numericProjectId`, `universeDomain`); `/` is the ping. Anything else is 404.
public struct GoogleMetadataEndpoint: Sendable {
  static let root = "/computeMetadata/v1/"
  /// The header every request must carry and every reply carries (`EndpointServer(headers:)` puts it
  /// on the replies the socket loop gives itself).
  public static let flavor = (name: "Metadata-Flavor", value: "Google")
  public static let universeDomain = "googleapis.com"

  /// The account's configured scopes (reported at `…/scopes`, used when a request names none).
  let scopes: [String]
  /// `project`, or nil.
  let project: String?
  /// The project's number (digits; `project-number`, or looked up), or why it is unknown; asked
  /// only when `project` is set.
  let projectNumber: @Sendable () async -> Result<String, EndpointFailure>
  /// A token for the scopes (nil: the account's), or why there is none.
  let token: @Sendable (_ scopes: [String]?) async -> Result<EndpointToken, EndpointFailure>
  /// The account's ID token if one is issued to `audience` (nil: a user account cannot mint one
  /// for that audience), or why there is none.
  let idToken: @Sendable (_ audience: String) async -> Result<Secret?, EndpointFailure>
  /// The signed-in user's email (the service account's email on GCE), or why it is unknown.
  let email: @Sendable () async -> Result<String, EndpointFailure>
  /// Unix seconds now, rounded up (for `expires_in`, which must not exceed the time left).
  let now: @Sendable () -> Int64

  public init(
    scopes: [String], project: String?,
    projectNumber: @escaping @Sendable () async -> Result<String, EndpointFailure>,
    token: @escaping @Sendable ([String]?) async -> Result<EndpointToken, EndpointFailure>,
    idToken: @escaping @Sendable (_ audience: String) async -> Result<Secret?, EndpointFailure>,
    email: @escaping @Sendable () async -> Result<String, EndpointFailure>, now: @escaping @Sendable () -> Int64
  ) {
    self.scopes = scopes
    self.project = project
    self.projectNumber = projectNumber
    self.token = token
    self.idToken = idToken
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
    let rest = String(request.path.dropFirst(Self.root.count))
    let query = FormEncoding.parameters(request.query).compactMapValues(\.last)
    let recursive = query["recursive"]?.lowercased() == "true"
    switch rest {
    case "", "/": return recursive ? await Self.document(tree()) : Self.text(200, "instance/\nproject/\nuniverse/\n")
    case "instance", "instance/":
      return recursive ? await Self.document(instance()) : Self.text(200, "service-accounts/\n")
    case "project", "project/":
      return recursive ? await Self.document(projectDocument()) : Self.text(200, "numeric-project-id\nproject-id\n")
    case "universe", "universe/":
      return recursive ? Self.json(200, JSONText.encode(["universeDomain": Self.universeDomain])) : Self.text(200, "universe-domain\n")
    case "project/project-id": return project.map { Self.text(200, $0) } ?? Self.notFound
    case "project/numeric-project-id":
      guard project != nil else { return Self.notFound }
      switch await projectNumber() {
      case .success(let number): return Self.text(200, number)
      case .failure(let f): return Self.failure(f)
      }
    // `universe_domain`: the spelling google-auth-library-python used before its PR #1613.
    case "universe/universe-domain", "universe/universe_domain": return Self.text(200, Self.universeDomain)
    case "instance/service-accounts", "instance/service-accounts/":
      if recursive { return await Self.document(serviceAccounts()) }
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
    return await serviceAccount(leaf, recursive: recursive, query: query)
  }

  /// The reply for `instance/service-accounts/ACCOUNT/LEAF` once ACCOUNT is known to be ours.
  private func serviceAccount(_ leaf: String, recursive: Bool, query: [String: String]) async -> EndpointReply {
    switch leaf {
    case "":
      guard recursive else { return Self.text(200, "aliases\nemail\nidentity\nscopes\ntoken\n") }
      return await Self.document(serviceAccountInfo())
    case "email":
      switch await email() {
      case .failure(let f): return Self.failure(f)
      case .success(let address): return Self.text(200, address)
      }
    case "aliases": return Self.text(200, "default\n")
    case "scopes": return Self.text(200, scopes.map { $0 + "\n" }.joined())
    case "token":
      // Comma-joined (Python, Go, Java); spaces are accepted too.
      let list = (query["scopes"] ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
      switch await token(list.isEmpty ? nil : list) {
      case .failure(let f): return Self.failure(f)
      case .success(let t):
        struct Doc: Encodable {
          var access_token: String
          var expires_in: Int64
          var token_type: String
        }
        // An integer ≥ 1 (golang/oauth2 rejects 0, Java reads an int32: bug-cases-3.md X12); the token source
        // hands out none with less than 1 s left.
        let left = max(1, t.expiresOn - now())
        return Self.json(200, JSONText.encode(Doc(access_token: t.accessToken.revealed, expires_in: left, token_type: "Bearer")))
      }
    case "identity":
      guard let audience = query["audience"], !audience.isEmpty else {
        return Self.text(400, "tokenbroker: missing 'audience'; ask for an ID token with ?audience=AUDIENCE\n")
      }
      switch await idToken(audience) {
      case .failure(let f): return Self.failure(f)
      case .success(let token?): return Self.text(200, token.revealed)
      // 404, not 400: gcloud asks for an ID token of its own client on every refresh and
      // ignores only a 404 (`gce.py` GetIdToken); a 400 makes it crash.
      case .success(nil): return Self.text(404, "tokenbroker: " + Self.noIDToken + "\n")
      }
    default: return Self.notFound
    }
  }

  /// Why the identity path refuses an audience (bug-cases-3.md X11): never another token in its place.
  public static let noIDToken =
    "a user account cannot mint ID tokens for other audiences; only its sign-in's OAuth client ID is served"
    + " (use a service account for other audiences)"

  // MARK: recursive documents

  struct ServiceAccountInfo: Encodable {
    var aliases: [String]
    var email: String
    var scopes: [String]
  }

  private func serviceAccountInfo() async -> Result<ServiceAccountInfo, EndpointFailure> {
    await email().map { ServiceAccountInfo(aliases: ["default"], email: $0, scopes: scopes) }
  }

  /// `instance/service-accounts/?recursive=true`: the account under `default` and under its email.
  private func serviceAccounts() async -> Result<[String: ServiceAccountInfo], EndpointFailure> {
    await serviceAccountInfo().map { ["default": $0, $0.email: $0] }
  }

  struct Instance: Encodable {
    var serviceAccounts: [String: ServiceAccountInfo]
  }

  private func instance() async -> Result<Instance, EndpointFailure> {
    await serviceAccounts().map(Instance.init)
  }

  struct Project: Encodable {
    /// A JSON number, as the server sends it.
    var numericProjectId: Int64?
    var projectId: String?
  }

  /// `project/?recursive=true`: `{}` without `project`.
  private func projectDocument() async -> Result<Project, EndpointFailure> {
    guard let project else { return .success(Project()) }
    return await projectNumber().map { Project(numericProjectId: Int64($0), projectId: project) }
  }

  struct Tree: Encodable {
    var instance: Instance
    var project: Project
    var universe: [String: String]
  }

  private func tree() async -> Result<Tree, EndpointFailure> {
    let instance = await instance()
    let project = await projectDocument()
    return instance.flatMap { i in project.map { Tree(instance: i, project: $0, universe: ["universeDomain": Self.universeDomain]) } }
  }

  static func document<T: Encodable>(_ result: Result<T, EndpointFailure>) -> EndpointReply {
    switch result {
    case .success(let doc): return json(200, JSONText.encode(doc))
    case .failure(let f): return failure(f)
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
