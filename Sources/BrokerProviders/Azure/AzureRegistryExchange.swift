import BrokerCore

/// A registry refresh token from Azure Container Registry's exchange, as docker's `Secret`.
public struct RegistryToken: Sendable, Equatable {
  public var refreshToken: Secret
  /// The token's JWT `exp` (Unix seconds), or nil when it is not a JWT with one.
  public var expiresOn: Int64?

  public init(refreshToken: Secret, expiresOn: Int64?) {
    self.refreshToken = refreshToken
    self.expiresOn = expiresOn
  }

  /// Seconds before `exp` at which a kept registry token is no longer handed out (interface.md §5).
  public static let margin: Int64 = 300

  /// Until when (Unix seconds) the token may be handed out again from memory: five minutes before
  /// `exp`; nil when it has no `exp`, so it is never kept.
  public var servedUntil: Int64? { expiresOn.map { $0 - Self.margin } }
}

/// Azure Container Registry's token exchange (interface.md §5; the ACR "AAD OAuth" flow that
/// `az acr login` uses, Azure/acr `docs/AAD-OAuth.md`): `POST https://HOST/oauth2/exchange` with
/// the form `grant_type=access_token`, `service=HOST`, `tenant=TENANT`, `access_token=…` answers
/// `{"refresh_token": …}`, which docker, podman and skopeo send as the password for the user
/// `00000000-0000-0000-0000-000000000000` at the registry's `/oauth2/token`.
public struct AzureRegistryExchange: Sendable {
  /// The user name docker is given with a registry refresh token (`az acr login`'s).
  public static let username = "00000000-0000-0000-0000-000000000000"

  let transport: any HTTPTransport
  let caFiles: [String]
  let time: any TimeSource
  /// Tries of an exchange that fails transiently (5xx, 408, no connection, no answer in time),
  /// waiting 1 s, then 2 s, as the token endpoints are tried; a 429 is never tried again at once.
  var maxAttempts = 3

  public init(transport: any HTTPTransport, caFiles: [String], time: any TimeSource) {
    self.transport = transport
    self.caFiles = caFiles
    self.time = time
  }

  /// The exchange request for `host` (`name[:port]`, lower-cased).
  /// - Parameters:
  ///   - tenant: the Entra tenant that issued `accessToken` (its `tid`).
  public func request(host: String, tenant: String, accessToken: Secret) -> HTTPRequest {
    .form(
      url: "https://\(host)/oauth2/exchange",
      fields: [
        ("grant_type", "access_token"), ("service", host), ("tenant", tenant), ("access_token", accessToken.revealed),
      ], caFiles: caFiles)
  }

  /// Exchanges `accessToken` (scope `https://containerregistry.azure.net/.default`) of `account`
  /// for a registry refresh token. Deletes nothing, whatever the answer.
  /// - Parameters:
  ///   - host: the registry, `name[:port]`, lower-cased.
  ///   - fallbackTenant: the tenant named when the access token is no JWT with a `tid`.
  /// - Throws: `RegistryError.refused` (401: exit 3), `.notFound` (404: exit 1), `.rejected`
  ///   (other 4xx: exit 1), `.unavailable` (5xx or 408 after `maxAttempts`, 429, a page that is
  ///   not the JSON, no `refresh_token`, a failure below HTTP: exit 4);
  ///   `HTTPError.libraryUnavailable` as it is.
  public func exchange(host: String, account: String, accessToken: Secret, fallbackTenant: String) async throws
    -> RegistryToken
  {
    let tenant = IDToken.claims(of: accessToken.revealed).tid ?? fallbackTenant
    let request = request(host: host, tenant: tenant, accessToken: accessToken)
    var attempt = 1
    while true {
      let tries = attempt == 1 ? "" : " (\(attempt) attempts)"
      do {
        let response = try await transport.send(request)
        let transient = response.status >= 500 || response.status == 408
        if !transient || attempt >= maxAttempts {
          return try Self.token(from: response, host: host, account: account, tries: tries)
        }
      } catch let error as HTTPError {
        if case .libraryUnavailable = error { throw error }
        guard Self.isTransient(error), attempt < maxAttempts else {
          throw RegistryError.unavailable(host: host, detail: error.description + tries)
        }
      }
      try await time.sleep(seconds: Double(1 << (attempt - 1)))
      attempt += 1
    }
  }

  /// A failure below HTTP worth another try (a TLS or URL problem is not).
  static func isTransient(_ error: HTTPError) -> Bool {
    switch error {
    case .timedOut, .cannotConnect, .cannotResolve, .other: return true
    default: return false
    }
  }

  /// The registry token in an exchange `response`, or the error it stands for.
  /// - Parameter tries: ` (N attempts)` after a retry, for the message.
  static func token(from response: HTTPResponse, host: String, account: String, tries: String = "") throws -> RegistryToken {
    switch response.status {
    case 200..<300:
      guard let token = JSONFields.parse(response.body)?.string("refresh_token"), !token.isEmpty,
        token.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
      else {
        throw RegistryError.unavailable(
          host: host, detail: "its token exchange answered HTTP \(response.status) without a refresh_token; try again later")
      }
      return RegistryToken(refreshToken: Secret(token), expiresOn: IDToken.claims(of: token).exp)
    case 401: throw RegistryError.refused(account: account, host: host)
    case 404: throw RegistryError.notFound(host: host)
    case 408, 429, 500...:
      throw RegistryError.unavailable(
        host: host, detail: "its token exchange answered HTTP \(response.status)\(tries); try again later")
    default:
      throw RegistryError.rejected(account: account, host: host, status: response.status)
    }
  }
}

/// Why a container registry's token exchange failed. No payload holds a token.
public enum RegistryError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Exit 3. The exchange answered 401: the registry took the account's token for no sign-in it
  /// knows (a revoked session, or a registry in another tenant, which only an account of that
  /// tenant can serve: the message names both). The refresh token is kept.
  case refused(account: String, host: String)
  /// Exit 1. The exchange answered 404: no registry of that name.
  case notFound(host: String)
  /// Exit 1. Another 4xx (400: a malformed exchange, 403: no access to this registry).
  case rejected(account: String, host: String, status: Int)
  /// Exit 4. Unreachable, timed out, 5xx, 429, or an answer that is not the exchange's JSON.
  case unavailable(host: String, detail: String)

  public var description: String {
    switch self {
    case .refused(let account, let host):
      return "the registry '\(host)' refused the token of '\(account)' at its token exchange (HTTP 401); "
        + "run 'tokenbroker login \(account)' (the sign-in is kept); if the registry belongs to another tenant, "
        + "serve it with an azure account of that tenant: [host \(host)] account = ACCOUNT"
    case .notFound(let host):
      return "'\(host)' has no registry token exchange (HTTP 404 at /oauth2/exchange); "
        + "check the registry name (NAME.azurecr.io) in the image reference"
    case .rejected(let account, let host, let status):
      return "the registry '\(host)' rejected the token exchange for '\(account)' (HTTP \(status)); "
        + "check that the account has access to the registry (AcrPull or AcrPush role)"
    case .unavailable(let host, let detail):
      return "the registry '\(host)' could not be used: \(detail)"
    }
  }
}
