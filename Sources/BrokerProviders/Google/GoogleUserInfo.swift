import BrokerCore
import FoundationEssentials

/// Who signed in, from the OpenID Connect userinfo endpoint (protocols.md §3.1) when the token
/// reply carried no readable ID token.
struct GoogleUserInfo: Sendable {
  let provider: GoogleProvider

  /// `grant` with its identity filled in from userinfo (`email`, `sub`) when it has none; the
  /// grant unchanged when the endpoint cannot be used (the sign-in still counts: the identity is
  /// only shown and stored for display).
  func withIdentity(_ grant: TokenGrant) async -> TokenGrant {
    guard grant.identity == nil else { return grant }
    var grant = grant
    grant.identity = await fetch(accessToken: grant.accessToken)
    return grant
  }

  /// `GET userinfo` with the access token as a bearer token; nil on any failure.
  func fetch(accessToken: Secret) async -> Identity? {
    let request = HTTPRequest(
      method: "GET", url: provider.endpoints.userinfo,
      headers: [HTTPHeader("Authorization", "Bearer " + accessToken.revealed), HTTPHeader("Accept", "application/json")],
      caFiles: provider.client.caFiles)
    guard let response = try? await provider.client.transport.send(request), response.status == 200,
      let claims = JSONText.decode(Claims.self, bytes: response.body)
    else { return nil }
    let email = claims.email.map(IDToken.printable).flatMap { $0.isEmpty ? nil : $0 }
    let sub = claims.sub.map(IDToken.printable).flatMap { $0.isEmpty ? nil : $0 }
    guard email != nil || sub != nil else { return nil }
    return Identity(username: email, subject: sub)
  }

  private struct Claims: Decodable {
    var email: String?
    var sub: String?
  }
}
