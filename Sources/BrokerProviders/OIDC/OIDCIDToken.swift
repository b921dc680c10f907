import BrokerCore
import FoundationEssentials

/// The checks of OpenID Connect Core §3.1.3.7 on an ID token that came straight from the token
/// endpoint over TLS (step 6 lets that replace the signature check; protocols-2.md §1.7): `iss`
/// equals the discovered issuer (Google's scheme-less form too, for Google's issuer only:
/// `issued(by:_:)`), `aud` contains the client, `azp` (when there are several
/// audiences and it is present) is the client, `exp` is in the future (5 min leeway), and `nonce`
/// equals the one sent.
enum OIDCIDToken {
  static let leeway: Int64 = 300

  /// - Parameters:
  ///   - claims: the token reply's `id_token`, as read there (`TokenGrant.idToken`).
  ///   - nonce: the `nonce` of the authorization request; nil when none was sent (device flow),
  ///     then a `nonce` in the token is not required.
  /// - Returns: who signed in (`IDTokenClaims.identity`).
  /// - Throws: `ProviderError.loginFailed` naming the claim that failed (never the token).
  static func verify(_ claims: IDTokenClaims, issuer: String, clientID: String, nonce: String?, now: Int64, account: String)
    throws(ProviderError) -> Identity
  {
    func fail(_ what: String) -> ProviderError {
      .loginFailed(account: account, reason: "the ID token was refused: \(what)")
    }
    guard claims.isReadable else { throw fail("it is not a readable JWT") }
    guard claims.iss.map({ issued(by: issuer, $0) }) ?? false else { throw fail("its iss is not the issuer '\(issuer)'") }
    guard claims.aud.contains(clientID) else { throw fail("its aud does not name the client '\(clientID)'") }
    if claims.aud.count > 1, let azp = claims.azp, azp != clientID { throw fail("its azp is another client") }
    guard let exp = claims.exp, exp + leeway > now else { throw fail("it has expired (check the system clock)") }
    if let nonce, !(claims.nonce.map { Secret(nonce).matches($0) } ?? false) {
      throw fail("its nonce does not match the one sent")
    }
    // OpenID Connect Core §2: `sub` is required (an `email` alone does not name the user).
    guard claims.sub?.isEmpty == false, let identity = claims.identity else { throw fail("it names nobody (no sub)") }
    return identity
  }

  /// The rules of OpenID Connect Core §12.2 for the ID token of a refresh reply (a reply without
  /// one is fine): `iss` the issuer, `aud` naming the client, `sub` the sign-in's (when it was
  /// recorded), and a `nonce` only if it is the sign-in's (the errata: SHOULD NOT be sent, MUST
  /// equal the original when it is; Keycloak sends either). `exp` is not held: the reply is fresh.
  /// - Parameters:
  ///   - subject, nonce: the sign-in's (`RefreshTokenRecord`); nil: not known, not checked
  ///     (device sign-ins send no nonce, so none is compared then).
  /// - Throws: `ProviderError.signInRequired` for another `sub` (exit 3: another user now answers
  ///   for the account); `.rejected` naming the claim and the issuer for the rest (exit 1).
  static func verifyRefreshed(
    _ claims: IDTokenClaims, issuer: String, clientID: String, subject: String?, nonce: String?, account: String
  ) throws(ProviderError) {
    let host = TokenEndpointClient.host(of: issuer)
    func fail(_ what: String) -> ProviderError {
      .rejected(
        account: account, error: "refreshed ID token refused",
        detail: "the ID token that \(host) sent with the refresh \(what) (OpenID Connect Core §12.2); "
          + "the rotated refresh token was kept and no access token was handed out; "
          + "if it persists, ask the administrators of '\(issuer)', or run 'tokenbroker login \(account)'")
    }
    guard claims.isReadable else { throw fail("is not a readable JWT") }
    guard claims.iss.map({ issued(by: issuer, $0) }) ?? false else { throw fail("names another issuer in iss") }
    guard claims.aud.contains(clientID) else { throw fail("does not name the client '\(clientID)' in aud") }
    if let subject, let sub = claims.sub, IDToken.printable(sub) != subject {
      throw .signInRequired(
        account: account, reason: "\(host) now reports a different user (sub) for account \(account)")
    }
    if let sent = claims.nonce, let nonce, !Secret(nonce).matches(sent) {
      throw fail("carries a nonce that is not the sign-in's")
    }
  }

  /// Google's ID tokens carry `iss` either as `https://accounts.google.com` or, for some users,
  /// without the scheme (Google's "Validating an ID token"; coreos/go-oidc#125): allowed for that
  /// exact issuer only. Every other issuer is compared byte for byte.
  static let google = "https://accounts.google.com"

  static func issued(by issuer: String, _ iss: String) -> Bool {
    iss == issuer || (issuer == google && iss == "accounts.google.com")
  }
}
