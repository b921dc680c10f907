import BrokerCore
import FoundationEssentials
import Testing

@testable import BrokerProviders

/// RFC 6749 §2.3.1 client authentication, one mechanism for every endpoint.
@Suite struct ClientAuthenticationTests {
  let grant = [("grant_type", "refresh_token")]

  /// §2.3.1: id and secret are form-encoded *before* base64, so `:` `%` `+` `/` and spaces survive.
  @Test func basicFormEncodesIdAndSecretBeforeBase64() throws {
    let encoded = ClientAuthentication.basicCredentials(id: "client:1", secret: Secret("p a%s+s/w=rd"))
    let decoded = String(decoding: try #require(Data(base64Encoded: encoded)), as: UTF8.self)
    #expect(decoded == "client%3A1:p+a%25s%2Bs%2Fw%3Drd")
    let plain = ClientAuthentication.basicCredentials(id: "abc", secret: Secret("def"))
    #expect(plain == "YWJjOmRlZg==")  // base64("abc:def")
  }

  @Test func postPutsBothValuesInTheBody() {
    let auth = ClientAuthentication(clientID: "id", secret: Secret("sec"), method: .clientSecretPost)
    let (fields, headers) = auth.apply(to: grant)
    #expect(fields.map(\.0) == ["client_id", "client_secret", "grant_type"])
    #expect(fields[1].1 == "sec")
    #expect(headers.isEmpty)
  }

  @Test func aClientWithoutASecretIsPublicWhateverIsAsked() {
    for secret in [nil, Secret("")] {
      let auth = ClientAuthentication(clientID: "id", secret: secret, method: .clientSecretBasic)
      #expect(auth.method == ClientAuthMethod.none)
      let (fields, headers) = auth.apply(to: grant)
      #expect(fields.map(\.0) == ["client_id", "grant_type"])
      #expect(headers.isEmpty)
      #expect(auth.secrets.isEmpty)
    }
  }

  @Test func withASecretTheDefaultIsBasicUnlessTheProviderSaysOtherwise() {
    #expect(ClientAuthentication(clientID: "id", secret: Secret("s"), method: nil).method == .clientSecretBasic)
    #expect(
      ClientAuthentication(clientID: "id", secret: Secret("s"), method: nil, fallback: .clientSecretPost).method
        == .clientSecretPost)
    #expect(
      ClientAuthentication(clientID: "id", secret: Secret("s"), method: .clientSecretBasic, fallback: .clientSecretPost)
        .method == .clientSecretBasic)
  }

  @Test func basicCredentialsAreRedactedToo() {
    let auth = ClientAuthentication(clientID: "id", secret: Secret("sec"), method: .clientSecretBasic)
    #expect(auth.secrets.contains("sec"))
    #expect(auth.secrets.contains(ClientAuthentication.basicCredentials(id: "id", secret: Secret("sec"))))
  }

  @Test func unauthenticatedSendsNoClientIdAtAll() {
    let (fields, headers) = ClientAuthentication.unauthenticated.apply(to: [("token", "t")])
    #expect(fields.map(\.0) == ["token"])
    #expect(headers.isEmpty)
  }
}
