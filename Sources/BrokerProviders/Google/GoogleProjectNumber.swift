import BrokerCore

/// A Google Cloud project's number, which exec's metadata endpoint serves at
/// `project/numeric-project-id` (interface.md §2.1 `project-number`, §9; bug-cases-3.md X10): the
/// account's `project-number` when set, else `GET {resource-manager-endpoint}/v1/projects/{project}`
/// (Cloud Resource Manager v1, `projects.get`: the reply's `projectNumber`, a string of digits) with
/// the account's access token. A number fetched is kept in `cache` as discovery documents are (at
/// most 24 hours, in memory and on disk), so a warm exec asks Resource Manager nothing.
public struct GoogleProjectNumber: Sendable {
  let account: AccountConfig
  let transport: any HTTPTransport
  let caFiles: [String]
  let cache: any DiscoveryCache
  let time: any TimeSource

  public init(
    account: AccountConfig, transport: any HTTPTransport, caFiles: [String], cache: any DiscoveryCache,
    time: any TimeSource
  ) {
    self.account = account
    self.transport = transport
    self.caFiles = caFiles
    self.cache = cache
    self.time = time
  }

  /// `projects.get` of the account's `project`, or nil without one.
  public var url: String? {
    account.project.map { account.resourceManagerEndpoint + "/v1/projects/" + FormEncoding.escape($0) }
  }

  /// The number (digits).
  /// - Parameter token: the account's access token (scope `cloud-platform` or
  ///   `cloudplatformprojects.readonly`); asked only when neither config nor cache has the number.
  /// - Throws: `ConfigError.invalid` naming `project-number` when the account has no `project` or
  ///   Resource Manager refuses (401, 403, 404: the project is not the account's, or the token
  ///   lacks the scope) or answers no number; `ProviderError.unavailable` (unreachable, 5xx, 429);
  ///   what `token` throws.
  public func number(token: () async throws -> Secret) async throws -> String {
    if let configured = account.projectNumber { return configured }
    guard let url, let project = account.project else { throw invalid("missing, and so is 'project'") }
    let now = time.now
    if let cached = await cache.load(issuer: url, now: now), let number = Self.parse(cached.body) { return number }
    let host = TokenEndpointClient.host(of: url)
    let bearer = try await token()
    let response: HTTPResponse
    do {
      response = try await transport.send(
        HTTPRequest(
          method: "GET", url: url,
          headers: [HTTPHeader("Accept", "application/json"), HTTPHeader("Authorization", "Bearer " + bearer.revealed)],
          caFiles: caFiles))
    } catch let error as HTTPError {
      if case .failed(let failure) = try TokenEndpointClient.classify(error, host: host) { throw failure }
      throw ProviderError.unavailable(host: host, detail: "the project number could not be looked up (\(error))")
    }
    if response.status >= 500 || response.status == 408 || response.status == 429 {
      throw ProviderError.unavailable(host: host, detail: "the project lookup answered HTTP \(response.status); try again later")
    }
    guard response.status == 200, let number = Self.parse(response.body) else {
      let what = response.status == 200 ? "answered no projectNumber" : "answered HTTP \(response.status)"
      throw invalid(
        "missing, and \(host) \(what) for project '\(project)' (the account may lack the cloud-platform scope or access); "
          + "set project-number to the number the console's project dashboard shows")
    }
    await cache.save(issuer: url, document: CachedDocument(body: response.body, fetchedAt: now))
    return number
  }

  /// `projectNumber` of a `projects.get` reply (a string, as int64 fields are in Google's JSON;
  /// a number is accepted too), when it is all digits.
  static func parse(_ body: [UInt8]) -> String? {
    guard let text = JSONFields.parse(body)?.digits("projectNumber"), !text.isEmpty, text.utf8.count <= 19,
      text.utf8.allSatisfy({ (0x30...0x39).contains($0) })
    else { return nil }
    return text
  }

  private func invalid(_ problem: String) -> ConfigError {
    .accountKey(account.name, "project-number", problem)
  }
}
