import BrokerCore

/// Token revocation at Google (RFC 7009 §2.1; protocols.md §3.6, §6): a `POST` of the refresh
/// token in the form body (never in the URL query, which proxies and logs keep); revoking it ends
/// the whole grant, access tokens included.
struct GoogleRevocation: Sendable {
  let provider: GoogleProvider

  /// - Returns: `.revoked` (200), or `.alreadyInvalid` when Google no longer knows the token
  ///   (400 `invalid_token`/`invalid_grant`: revoked or expired already).
  /// - Throws: `ProviderError.unavailable` (network, 5xx after retries, a reply that is not
  ///   Google's), `.rejected` (any other refusal).
  func revoke(_ refreshToken: Secret) async throws -> RevocationOutcome {
    let url = provider.endpoints.revocation
    let host = TokenEndpointClient.host(of: url)
    let fields = [("token", refreshToken.revealed)]
    switch try await provider.client.post(url: url, fields: fields, secrets: [refreshToken.revealed]) {
    case .success:
      return .revoked
    case .error(let reply):
      if ["invalid_token", "invalid_grant"].contains(reply.error) { return .alreadyInvalid }
      if reply.error == "temporarily_unavailable" || reply.error == "server_error" {
        throw ProviderError.unavailable(host: host, detail: "\(reply.summary); try again later")
      }
      throw ProviderError.rejected(
        account: provider.account.name, error: reply.error,
        detail: "the revocation was refused (\(reply.summary)); check revocation-endpoint")
    }
  }
}
