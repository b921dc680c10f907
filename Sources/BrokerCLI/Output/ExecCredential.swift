import BrokerCore
import BrokerProviders
import FoundationEssentials

/// The kubectl / client-go ExecCredential that `--format exec-credential` prints, in the
/// `apiVersion` the caller expects (interface.md §3; protocols.md §7.2). kubectl names it
/// in `KUBERNETES_EXEC_INFO` (a JSON ExecCredential with `apiVersion`, `kind` and `spec`) and
/// refuses an answer in any other version.
enum ExecCredentialVersion: String, CaseIterable {
  case v1 = "client.authentication.k8s.io/v1"
  case v1beta1 = "client.authentication.k8s.io/v1beta1"

  /// The version `KUBERNETES_EXEC_INFO` names; `v1` when the variable is absent or empty.
  /// - Throws: `HelperError` (exit 64) when it is not an ExecCredential document or names
  ///   another version; its message names the supported versions.
  init(environment: [String: String]) throws {
    guard let info = environment["KUBERNETES_EXEC_INFO"], !info.isEmpty else {
      self = .v1
      return
    }
    struct Info: Decodable {
      var apiVersion: String?
      var kind: String?
    }
    let doc = try? JSONDecoder().decode(Info.self, from: Data(info.utf8))
    let supported = Self.allCases.map(\.rawValue).joined(separator: " and ")
    guard let doc, doc.kind == "ExecCredential", let version = doc.apiVersion else {
      throw HelperError(
        status: .usage,
        description: "KUBERNETES_EXEC_INFO is not an ExecCredential with an apiVersion; run tokenbroker from a "
          + "kubeconfig exec plugin of apiVersion \(supported)")
    }
    guard let known = Self(rawValue: version) else {
      throw HelperError(
        status: .usage,
        description: "KUBERNETES_EXEC_INFO asks for ExecCredential apiVersion '\(TerminalText.clean(version))'; "
          + "set the kubeconfig's exec apiVersion to \(supported)")
    }
    self = known
  }

  /// The ExecCredential document for `t`: `status.token` and `status.expirationTimestamp`
  /// (RFC 3339 UTC), the same shape in both versions; ends with a newline. For a `kube-token = id`
  /// account `t` is the ID token with its own `exp` (`CredentialKind.idToken`).
  func render(_ t: IssuedToken) -> String {
    struct Status: Encodable {
      var token: String
      var expirationTimestamp: String
    }
    struct Doc: Encodable {
      var apiVersion: String
      var kind = "ExecCredential"
      var status: Status
    }
    let status = Status(token: t.accessToken.revealed, expirationTimestamp: RFC3339.utc(t.expiresOn))
    return JSONText.encode(Doc(apiVersion: rawValue, status: status)) + "\n"
  }
}
