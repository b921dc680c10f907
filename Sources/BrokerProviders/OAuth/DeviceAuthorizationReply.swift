import BrokerCore
import FoundationEssentials

/// Device authorization responses (RFC 8628 §3.2), Microsoft's and Google's.
enum DeviceAuthorizationReply {
  /// Used when `interval` is absent or not a positive number (RFC 8628 §3.2).
  static let defaultInterval = 5
  /// Used when `expires_in` is absent: Microsoft's documented default (protocols.md §2.5). MSAL
  /// Python assumes 1800; the shorter value never polls past a code's real life.
  static let defaultExpiresIn = 900

  /// - Parameter now: Unix seconds when the reply arrived (`issuedAt`).
  /// - Throws: `ProviderError.unavailable` when the body is not JSON or lacks `device_code`,
  ///   `user_code` or the verification URI.
  static func parse(_ body: [UInt8], now: Int64, host: String) throws(ProviderError) -> DeviceAuthorization {
    guard let b = JSONText.decode(Body.self, bytes: body), let deviceCode = b.deviceCode, !deviceCode.isEmpty,
      let userCode = b.userCode, !userCode.isEmpty, let uri = b.verificationURI ?? b.verificationURL, !uri.isEmpty
    else { throw TokenEndpointClient.incompleteReply(host: host, lacking: "device_code, user_code or verification_uri") }
    return DeviceAuthorization(
      deviceCode: Secret(deviceCode), userCode: userCode, verificationURI: uri,
      verificationURIComplete: b.verificationURIComplete,
      expiresIn: b.expiresIn.flatMap { $0 > 0 ? $0 : nil } ?? defaultExpiresIn,
      interval: b.interval.flatMap { $0 > 0 ? $0 : nil } ?? defaultInterval, message: b.message, issuedAt: now)
  }

  private struct Body: Decodable {
    var deviceCode: String?
    var userCode: String?
    var verificationURI: String?
    var verificationURL: String?
    var verificationURIComplete: String?
    var expiresIn: Int?
    var interval: Int?
    var message: String?

    enum CodingKeys: String, CodingKey {
      case interval, message
      case deviceCode = "device_code"
      case userCode = "user_code"
      case verificationURI = "verification_uri"
      case verificationURL = "verification_url"
      case verificationURIComplete = "verification_uri_complete"
      case expiresIn = "expires_in"
    }

    init(from decoder: any Decoder) throws {
      let c = try decoder.container(keyedBy: CodingKeys.self)
      deviceCode = c.lenientString(.deviceCode)
      userCode = c.lenientString(.userCode)
      verificationURI = c.lenientString(.verificationURI)
      verificationURL = c.lenientString(.verificationURL)
      verificationURIComplete = c.lenientString(.verificationURIComplete)
      expiresIn = c.lenientInt(.expiresIn)
      interval = c.lenientInt(.interval)
      message = c.lenientString(.message)
    }
  }
}
