@testable import BrokerCLI
import BrokerCore
import BrokerProviders
import Testing

@Suite struct ExecCredentialTests {
  let token = IssuedToken(
    account: "work", provider: .azure, tokenType: "Bearer", accessToken: Secret("AT-1"), expiresOn: 1_795_970_549,
    scopes: ["a", "b"], identity: "u@x")

  private func info(_ version: String) -> [String: String] {
    ["KUBERNETES_EXEC_INFO": #"{"kind":"ExecCredential","apiVersion":"\#(version)","spec":{"interactive":false}}"#]
  }

  @Test func theVersionComesFromKubernetesExecInfo() throws {
    #expect(try ExecCredentialVersion(environment: [:]) == .v1)
    #expect(try ExecCredentialVersion(environment: ["KUBERNETES_EXEC_INFO": ""]) == .v1)
    #expect(try ExecCredentialVersion(environment: info("client.authentication.k8s.io/v1")) == .v1)
    #expect(try ExecCredentialVersion(environment: info("client.authentication.k8s.io/v1beta1")) == .v1beta1)
  }

  @Test(arguments: [
    #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1alpha1"}"#,
    #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v2"}"#, #"{"kind":"ExecCredential"}"#,
    #"{"kind":"Other","apiVersion":"client.authentication.k8s.io/v1"}"#, "not json", "[]",
  ])
  func otherInfoIsAUsageErrorNamingTheSupportedVersions(raw: String) {
    do {
      _ = try ExecCredentialVersion(environment: ["KUBERNETES_EXEC_INFO": raw])
      Issue.record("accepted \(raw)")
    } catch let e as HelperError {
      #expect(e.status == .usage)
      #expect(e.description.contains("client.authentication.k8s.io/v1 and client.authentication.k8s.io/v1beta1"))
      #expect(!e.description.contains("\n"))
    } catch { Issue.record("\(error)") }
  }

  @Test func bothVersionsHaveTheSameShape() {
    for (version, name) in [(ExecCredentialVersion.v1, "v1"), (.v1beta1, "v1beta1")] {
      #expect(
        version.render(token)
          == #"{"apiVersion":"client.authentication.k8s.io/\#(name)","kind":"ExecCredential","status":{"expirationTimestamp":"2026-11-29T16:42:29Z","token":"AT-1"}}"#
          + "\n")
    }
    #expect(TokenFormat.execCredential.render(token, execCredential: .v1beta1) == ExecCredentialVersion.v1beta1.render(token))
  }
}
