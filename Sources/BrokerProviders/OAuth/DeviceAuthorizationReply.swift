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
    guard let b = JSONFields.parse(body), let deviceCode = b.string("device_code"), !deviceCode.isEmpty,
      let userCode = b.string("user_code"), !userCode.isEmpty,
      let uri = b.string("verification_uri") ?? b.string("verification_url"), !uri.isEmpty
    else { throw TokenEndpointClient.incompleteReply(host: host, lacking: "device_code, user_code or verification_uri") }
    return DeviceAuthorization(
      deviceCode: Secret(deviceCode), userCode: userCode, verificationURI: uri,
      verificationURIComplete: b.string("verification_uri_complete"),
      expiresIn: b.int("expires_in").flatMap { $0 > 0 ? $0 : nil } ?? defaultExpiresIn,
      interval: b.int("interval").flatMap { $0 > 0 ? $0 : nil } ?? defaultInterval, message: b.string("message"),
      issuedAt: now)
  }
}
