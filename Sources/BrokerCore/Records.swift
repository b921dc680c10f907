import FoundationEssentials

/// The document stored for `kind = refresh-token` (interface.md §7):
/// `{"v":1,"refresh_token":…,"identity":…,"tenant":…,"obtained_at":…}`, plus `client_id` (the
/// client that obtained the token), `sub` and `nonce` (of the sign-in's ID token: what a refreshed
/// ID token is held to, OpenID Connect Core §12.2) when known, and `rotations` once the token has
/// been rotated; documents without them stay readable.
public struct RefreshTokenRecord: Sendable, Equatable {
  public var refreshToken: Secret
  /// The signed-in identity (`preferred_username`, else `email`, else `oid`/`sub`), or nil.
  public var identity: String?
  /// The tenant id (`tid` claim) for Azure, or nil.
  public var tenant: String?
  /// The object id (`oid` claim) for Azure, or nil.
  public var objectID: String?
  /// Unix seconds when the refresh token was obtained.
  public var obtainedAt: Int64
  /// The OAuth client that obtained the token (a refresh token must be redeemed by its own
  /// client: Google's device flow uses `device-client-id`); nil in documents written before.
  public var clientID: String?
  /// The sign-in's ID token `sub`, or nil (none, or a document written before).
  public var subject: String?
  /// The `nonce` the sign-in's ID token carried (browser sign-ins send one), or nil.
  public var nonce: String?
  /// How many records came before this one: each rotation, and a new sign-in over a stored
  /// record, counts one more than the record it replaces (0 for a first sign-in); orders two
  /// documents of one second (`DocumentAge`).
  public var rotations: Int
  /// Unix seconds when the provider said the refresh token expires (Google's
  /// `refresh_token_expires_in`, Keycloak's `refresh_expires_in`), or nil: unstated or none.
  public var expiresOn: Int64?

  public init(
    refreshToken: Secret, identity: String?, tenant: String?, objectID: String? = nil, obtainedAt: Int64,
    clientID: String? = nil, subject: String? = nil, nonce: String? = nil, rotations: Int = 0,
    expiresOn: Int64? = nil
  ) {
    self.expiresOn = expiresOn
    self.refreshToken = refreshToken
    self.identity = identity
    self.tenant = tenant
    self.objectID = objectID
    self.obtainedAt = obtainedAt
    self.clientID = clientID
    self.subject = subject
    self.nonce = nonce
    self.rotations = rotations
  }

  /// The record of `rotated`, the provider's replacement of this record's token: the same
  /// sign-in, one rotation more, obtained at `now` but never before this record (a wall clock
  /// stepped back must not make the new document look older than the one it replaces).
  public func rotated(to rotated: Secret, now: Int64) -> RefreshTokenRecord {
    var record = self
    record.refreshToken = rotated
    record.obtainedAt = max(now, obtainedAt)
    record.rotations = rotations + 1
    return record
  }

  private struct Document: Codable {
    var v: Int
    var refresh_token: String
    var identity: String?
    var tenant: String?
    var oid: String?
    var obtained_at: Int64
    var client_id: String?
    var sub: String?
    var nonce: String?
    var rotations: Int?
    var expires_on: Int64?
  }

  /// The JSON document, as a `Secret`.
  public func encoded() -> Secret {
    let d = Document(
      v: 1, refresh_token: refreshToken.revealed, identity: identity, tenant: tenant, oid: objectID,
      obtained_at: obtainedAt, client_id: clientID, sub: subject, nonce: nonce, rotations: rotations > 0 ? rotations : nil,
      expires_on: expiresOn)
    return Secret(JSONText.encode(d))
  }

  /// Parses a stored document. - Throws: `StoreError.corrupt` naming `item`.
  public static func decode(_ secret: Secret, item: String) throws -> RefreshTokenRecord {
    guard let d = JSONText.decode(Document.self, secret.revealed), d.v == 1, !d.refresh_token.isEmpty else {
      throw StoreError.corrupt(item: item)
    }
    return RefreshTokenRecord(
      refreshToken: Secret(d.refresh_token), identity: d.identity, tenant: d.tenant, objectID: d.oid,
      obtainedAt: OutsideTime.bounded(d.obtained_at), clientID: d.client_id, subject: d.sub, nonce: d.nonce,
      rotations: min(max(0, d.rotations ?? 0), Int(OutsideTime.limit)), expiresOn: d.expires_on.map(OutsideTime.bounded))
  }
}

/// The document stored for `kind = access-token`:
/// `{"v":1,"access_token":…,"expires_on":…,"scopes":[…],"obtained_at":…}` (`obtained_at` absent in
/// documents written before it was kept), plus `id_token` and `id_token_expires_on` when the reply
/// that brought the access token carried an OpenID Connect ID token (`kube-token = id`).
public struct AccessTokenRecord: Sendable, Equatable {
  public var accessToken: Secret
  /// Unix seconds when the access token expires.
  public var expiresOn: Int64
  /// The scope set the token was requested for, sorted.
  public var scopes: [String]
  /// The reply's `token_type`, `bearer` written `Bearer`, and `Bearer` when the reply has none.
  public var tokenType: String
  /// Unix seconds when the token was obtained, or nil when unknown.
  public var obtainedAt: Int64?
  /// The ID token of the same reply, or nil (none came, or a document written before).
  public var idToken: Secret?
  /// Unix seconds: the ID token's `exp` claim; set exactly when `idToken` is.
  public var idTokenExpiresOn: Int64?

  public init(
    accessToken: Secret, expiresOn: Int64, scopes: [String], tokenType: String = "Bearer", obtainedAt: Int64? = nil,
    idToken: Secret? = nil, idTokenExpiresOn: Int64? = nil
  ) {
    self.idToken = idToken
    self.idTokenExpiresOn = idTokenExpiresOn
    self.accessToken = accessToken
    self.expiresOn = expiresOn
    self.scopes = scopes
    self.tokenType = tokenType
    self.obtainedAt = obtainedAt
  }

  /// Seconds from `obtainedAt` to `expiresOn`, or nil when unknown.
  public var lifetime: Int64? { obtainedAt.map { expiresOn - $0 } }

  private struct Document: Codable {
    var v: Int
    var access_token: String
    var expires_on: Int64
    var scopes: [String]
    var token_type: String?
    var obtained_at: Int64?
    var id_token: String?
    var id_token_expires_on: Int64?
  }

  public func encoded() -> Secret {
    Secret(
      JSONText.encode(
        Document(
          v: 1, access_token: accessToken.revealed, expires_on: expiresOn, scopes: scopes, token_type: tokenType,
          obtained_at: obtainedAt, id_token: idToken?.revealed, id_token_expires_on: idTokenExpiresOn)))
  }

  /// - Throws: `StoreError.corrupt` naming `item`.
  public static func decode(_ secret: Secret, item: String) throws -> AccessTokenRecord {
    guard let d = JSONText.decode(Document.self, secret.revealed), d.v == 1, !d.access_token.isEmpty else {
      throw StoreError.corrupt(item: item)
    }
    // An ID token counts only with its expiry (a half-written pair is none).
    let id = d.id_token.flatMap { $0.isEmpty ? nil : $0 }
    let idExpiry = id == nil ? nil : d.id_token_expires_on.map(OutsideTime.bounded)
    return AccessTokenRecord(
      accessToken: Secret(d.access_token), expiresOn: OutsideTime.bounded(d.expires_on), scopes: d.scopes,
      tokenType: d.token_type ?? "Bearer", obtainedAt: d.obtained_at.map(OutsideTime.bounded), idToken: idExpiry == nil ? nil : id.map(Secret.init), idTokenExpiresOn: idExpiry)
  }
}

/// Small JSON helpers over FoundationEssentials, with sorted keys for stable output.
public enum JSONText {
  public static func encode<T: Encodable>(_ value: T) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding plain structs of strings and numbers cannot fail.
    guard let data = try? encoder.encode(value) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }
  public static func decode<T: Decodable>(_ type: T.Type, _ text: String) -> T? {
    try? JSONDecoder().decode(type, from: Data(text.utf8))
  }
  public static func decode<T: Decodable>(_ type: T.Type, bytes: [UInt8]) -> T? {
    try? JSONDecoder().decode(type, from: Data(bytes))
  }
}
