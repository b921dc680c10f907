import BrokerCore

/// Refusals of the credential-helper actions that are not errors of a lower layer.
struct HelperError: Error, CustomStringConvertible {
  var status: ExitStatus
  var description: String

  static func missing(_ key: String) -> HelperError {
    HelperError(status: .failure, description: "the credential request has no '\(key)'; nothing was looked up")
  }
  static func insecureProtocol(_ proto: String, host: String) -> HelperError {
    HelperError(
      status: .failure,
      description: "refusing to hand a token to '\(host)' over '\(proto)'; use an https:// remote URL")
  }
  static let badURL = HelperError(
    status: .failure, description: "the credential request's 'url' cannot be parsed or disagrees with 'host'; nothing was looked up")
}
