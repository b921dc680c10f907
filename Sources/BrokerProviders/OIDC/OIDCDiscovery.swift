import BrokerCore

/// Finds an issuer's metadata (interface.md §2.1 "Discovery"; OpenID Connect Discovery §4, RFC
/// 8414 §3): `{issuer}/.well-known/openid-configuration` (one terminating `/` of the issuer
/// removed first), else `{scheme}://{host}/.well-known/oauth-authorization-server{path}`. The
/// document's `issuer` must equal the configured one byte for byte (the mix-up defence, §4.3).
/// Documents come from `cache` while fresh (at most 24 h), so a warm `token get` fetches none.
struct OIDCDiscovery: Sendable {
  let account: AccountConfig
  /// The configured issuer, verbatim.
  let issuer: String
  let transport: any HTTPTransport
  let caFiles: [String]
  let cache: any DiscoveryCache
  let time: any TimeSource

  /// The two places to look, in order.
  var documentURLs: [String] {
    var base = issuer
    if base.hasSuffix("/") { base.removeLast() }
    var urls = [base + "/.well-known/openid-configuration"]
    if let url = EndpointURL(issuer) {
      var path = url.path
      if path.hasSuffix("/") { path.removeLast() }
      urls.append("\(url.scheme)://\(url.authority)/.well-known/oauth-authorization-server\(path)")
    }
    return urls
  }

  /// - Throws: `ConfigError.invalid` (exit 64) naming the issuer: no document at either place
  ///   (404, not JSON, no `token_endpoint`) or one whose `issuer` differs (named too);
  ///   `ProviderError.unavailable` (exit 4): unreachable, timeout, TLS, 5xx, 429;
  ///   `HTTPError.libraryUnavailable` as it is (`TokenEndpointClient.classify`). Nothing is
  ///   deleted either way.
  func metadata() async throws -> OIDCMetadata {
    let now = time.now
    if let cached = await cache.load(issuer: issuer, now: now),
      let metadata = OIDCMetadata.parse(cached.body, overrides: account.endpoints), metadata.issuer == issuer
    {
      return metadata
    }
    // A 200 page that is not JSON (a proxy's or portal's, bug-cases-3.md X06) is said, and never cached.
    var notJSON: String?
    for url in documentURLs {
      guard let response = try await fetch(url) else { continue }
      let body = response.body
      guard let metadata = OIDCMetadata.parse(body, overrides: account.endpoints) else {
        if notJSON == nil, JSONFields.parse(body) == nil {
          let type = TokenEndpointClient.mediaType(response.header("Content-Type"))
          notJSON = "; \(TokenEndpointClient.host(of: url)) answered HTTP 200 with \(type), not JSON (HTML, a proxy?): "
            + "a proxy or portal may be intercepting"
        }
        continue
      }
      guard metadata.issuer == issuer else { throw mismatch(metadata.issuer) }
      await cache.save(issuer: issuer, document: CachedDocument(body: body, fetchedAt: now))
      return metadata
    }
    throw invalid(
      "no discovery document for '\(issuer)' (tried \(documentURLs.joined(separator: " and ")))\(notJSON ?? ""); "
        + "check the issuer URL (it is printed on the provider's OpenID Connect settings page)")
  }

  /// A 200 answer, nil for an answer that means "not here" (404 and other 4xx).
  private func fetch(_ url: String) async throws -> HTTPResponse? {
    let host = TokenEndpointClient.host(of: url)
    let request = HTTPRequest(
      method: "GET", url: url, headers: [HTTPHeader("Accept", "application/json")], caFiles: caFiles)
    let response: HTTPResponse
    do {
      response = try await transport.send(request)
    } catch let error as HTTPError {
      // The rule of every flow (`classify`): a missing libcurl as it is, TLS and URL faults as such.
      if case .failed(let failure) = try TokenEndpointClient.classify(error, host: host) { throw failure }
      throw ProviderError.unavailable(host: host, detail: "its discovery document could not be fetched (\(error))")
    }
    if response.status >= 500 || response.status == 408 || response.status == 429 {
      throw ProviderError.unavailable(
        host: host, detail: "its discovery document answered HTTP \(response.status); try again later")
    }
    return response.status == 200 ? response : nil
  }

  /// Both values quoted, so a one-character difference shows; for one that is only a
  /// terminating `/` (Authentik and Auth0 print theirs with it), the line to write.
  private func mismatch(_ found: String) -> ConfigError {
    let shown = IDToken.printable(found)
    // Entra's multi-tenant endpoints (common, organizations) publish a template, not an issuer:
    // the real one names the user's tenant (bug-cases-3.md X02). The check stays; the way out is said.
    if shown.contains("{tenantid}") {
      let own = shown.replacing("{tenantid}", with: "TENANT-ID")
      return invalid(
        "the discovery document of '\(issuer)' names the template issuer '\(shown)' (its {tenantid} placeholder "
          + "stands for each user's tenant, so no ID token can match it); use 'provider = azure' with "
          + "'tenant = organizations' (or 'common'), or set 'issuer = \(own)' with your tenant's ID")
    }
    guard found.trimmingSlash == issuer.trimmingSlash else {
      return invalid(
        "the discovery document of '\(issuer)' names the issuer '\(shown)'; "
          + "set issuer to exactly the document's value if that server is the one you mean")
    }
    return invalid(
      "the discovery document of '\(issuer)' names the issuer '\(shown)' (they differ only in a terminating '/'); "
        + "write 'issuer = \(shown)', exactly as the provider prints it (OpenID Connect Discovery §4.3)")
  }

  private func invalid(_ problem: String) -> ConfigError {
    .accountKey(account.name, "issuer", problem)
  }
}

extension String {
  fileprivate var trimmingSlash: Substring { hasSuffix("/") ? dropLast() : Substring(self) }
}
