import BrokerCore
import FoundationEssentials

/// Successful token responses (RFC 6749 §5.1; protocols.md §2.3).
enum TokenReply {
  /// Lifetime assumed when `expires_in` is absent (RFC 6749 §5.1 makes it optional; Microsoft and
  /// Google always send it, 3599 s in their examples).
  static let defaultLifetime = 3600

  /// Parses a 2xx body into a grant. `expiresOn` is `now + expires_in`.
  /// - Parameters:
  ///   - requested: the scopes asked for; the grant's scopes when the reply has no `scope`.
  ///   - now: Unix seconds when the request was sent (so `expiresOn` errs early, never late).
  /// - Throws: `ProviderError.unavailable` when the body is not JSON, lacks `access_token`,
  ///   carries a token that has already expired (`expires_in` ≤ 0), or an access, refresh or ID
  ///   token with a character outside printable ASCII (RFC 6749 Appendix A.12 and A.17:
  ///   `1*VSCHAR`): such a token would break the header, env and git lines it is printed in,
  ///   and the refresh token already stored is kept.
  static func grant(from body: [UInt8], requested: ScopeSet, now: Int64, host: String) throws(ProviderError)
    -> TokenGrant
  {
    guard let b = JSONFields.parse(body), let token = b.string("access_token"), !token.isEmpty else {
      throw TokenEndpointClient.incompleteReply(host: host, lacking: "access_token")
    }
    let (refreshToken, idToken) = (b.string("refresh_token"), b.string("id_token"))
    for (name, value) in [("access", token), ("refresh", refreshToken ?? ""), ("ID", idToken ?? "")]
    where !value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) {
      throw ProviderError.unavailable(
        host: host,
        detail: "it returned an \(name) token with characters RFC 6749 does not allow in one (only printable ASCII); "
          + "try again later, and tell the provider's administrator if it persists")
    }
    let lifetime = b.int("expires_in") ?? defaultLifetime
    guard lifetime > 0 else {
      throw ProviderError.unavailable(
        host: host, detail: "it returned an access token that has already expired (expires_in \(lifetime)); try again later")
    }
    // `scope` split on spaces or commas (GitHub's replies list them comma-separated:
    // `scope=repo%2Cgist`; interface.md §2.2).
    let scopes = b.string("scope").map { $0.split(whereSeparator: { " \t,".contains($0) }).map(String.init) } ?? []
    let claims = idToken.map(IDToken.claims(of:))
    var tokenType = b.string("token_type").map { Redaction.codeWord($0, fallback: "Bearer") } ?? "Bearer"
    if tokenType.lowercased() == "bearer" { tokenType = "Bearer" }
    var grant = TokenGrant(
      accessToken: Secret(token), expiresOn: now + Int64(lifetime),
      refreshToken: refreshToken.flatMap { $0.isEmpty ? nil : Secret($0) },
      refreshTokenWasEmpty: refreshToken == "",
      scopes: scopes.isEmpty ? requested.items : scopes,
      identity: claims?.identity, tokenType: tokenType, idToken: claims,
      receivedAt: now, idTokenValue: idToken.flatMap { $0.isEmpty ? nil : Secret($0) })
    grant.refreshTokenExpiresOn = refreshLifetime(b).map { now + Int64($0) }
    return grant
  }

  /// Seconds the refresh token has left where the reply states it: Google's
  /// `refresh_token_expires_in`, else Keycloak's `refresh_expires_in` (whose `0` means none); nil
  /// when unstated, zero or negative.
  static func refreshLifetime(_ b: JSONFields) -> Int? {
    guard let seconds = b.int("refresh_token_expires_in") ?? b.int("refresh_expires_in"), seconds > 0 else { return nil }
    return seconds
  }
}
