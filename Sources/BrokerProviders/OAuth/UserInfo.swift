import BrokerCore
import FoundationEssentials

/// Who signed in, from the OpenID Connect userinfo endpoint (OpenID Connect Core §5.3; Google:
/// protocols.md §3.1) when the token reply carried no readable ID token.
struct UserInfo: Sendable {
  let client: TokenEndpointClient
  /// The userinfo endpoint; nil when the server has none.
  let url: String?

  /// `grant` with its identity filled in from userinfo (`IDTokenClaims.identity`, the ID token's
  /// rule) when it has none; the grant unchanged when the endpoint cannot be used (the sign-in
  /// still counts: the identity is only shown and stored for display).
  func withIdentity(_ grant: TokenGrant) async -> TokenGrant {
    guard grant.identity == nil else { return grant }
    var grant = grant
    grant.identity = await fetch(accessToken: grant.accessToken)
    return grant
  }

  /// `GET userinfo` with the access token as a bearer token; nil on any failure.
  func fetch(accessToken: Secret) async -> Identity? {
    guard let url else { return nil }
    let request = HTTPRequest(
      method: "GET", url: url,
      headers: [HTTPHeader("Authorization", "Bearer " + accessToken.revealed), HTTPHeader("Accept", "application/json")],
      caFiles: client.caFiles)
    guard let response = try? await client.transport.send(request), response.status == 200,
      let claims = JSONFields.parse(response.body).map(IDTokenClaims.init)
    else { return nil }
    return claims.identity
  }
}
