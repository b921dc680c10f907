import BrokerCore
import BrokerSystem
import Synchronization
import Testing

/// The Compute Engine metadata paths google-auth, the Cloud libraries and gcloud read
/// (protocols-2.md §2.4–2.6), without sockets.
struct GoogleMetadataEndpointTests {
  static func endpoint(
    project: String? = "proj-1", signedIn: Bool = true, asked: Recorded<[String]?>? = nil
  ) -> GoogleMetadataEndpoint {
    let notSignedIn = EndpointFailure(kind: .signInRequired, message: "'g' is not signed in; run 'tokenbroker login g'")
    return GoogleMetadataEndpoint(
      scopes: ["openid", "email", "https://www.googleapis.com/auth/cloud-platform"], project: project,
      token: { scopes in
        asked?.append(scopes)
        return signedIn ? .success(EndpointToken(accessToken: Secret("GAT"), expiresOn: 10_000)) : .failure(notSignedIn)
      },
      email: { signedIn ? .success("user1@example.test") : .failure(notSignedIn) }, now: { 6_400 })
  }

  static func get(_ target: String, flavor: Bool = true, extra: [String: String] = [:]) -> LoopbackRequest {
    let parts = target.split(separator: "?", maxSplits: 1)
    var headers = extra
    if flavor { headers["metadata-flavor"] = "Google" }
    return LoopbackRequest(
      method: "GET", path: String(parts[0]), query: parts.count > 1 ? String(parts[1]) : "", host: nil, headers: headers)
  }

  static let sa = "/computeMetadata/v1/instance/service-accounts/"

  @Test func tokenWithCommaJoinedScopesAndAnIntegerExpiresIn() async {
    let asked = Recorded<[String]?>()
    let e = Self.endpoint(asked: asked)
    let reply = await e.answer(Self.get(Self.sa + "default/token?scopes=a,b%2Cc"))
    #expect(reply.status == 200)
    #expect(reply.contentType == "application/json")
    #expect(reply.headers.contains { $0.name == "Metadata-Flavor" && $0.value == "Google" })
    #expect(reply.bodyText == #"{"access_token":"GAT","expires_in":3600,"token_type":"Bearer"}"#)
    _ = await e.answer(Self.get(Self.sa + "default/token"))
    #expect(asked.all == [["a", "b", "c"], nil])
  }

  @Test func serviceAccountInfoAlsoUnderTheEmail() async {
    let e = Self.endpoint()
    for account in ["default", "user1@example.test", "USER1@example.test"] {
      let info = await e.answer(Self.get(Self.sa + account + "/?recursive=true"))
      #expect(info.status == 200)
      #expect(
        info.bodyText
          == #"{"aliases":["default"],"email":"user1@example.test","scopes":["openid","email","https://www.googleapis.com/auth/cloud-platform"]}"#
      )
      #expect(await e.answer(Self.get(Self.sa + account + "/token")).status == 200)
    }
    #expect(await e.answer(Self.get(Self.sa + "other@example.test/token")).status == 404)
    #expect(await e.answer(Self.get(Self.sa + "default/email")).bodyText == "user1@example.test")
    #expect(await e.answer(Self.get(Self.sa + "default/scopes")).bodyText.hasPrefix("openid\nemail\n"))
    #expect(await e.answer(Self.get(Self.sa)).bodyText == "default/\nuser1@example.test/\n")
  }

  @Test func projectUniverseAndPing() async {
    let e = Self.endpoint()
    #expect(await e.answer(Self.get("/computeMetadata/v1/project/project-id")).bodyText == "proj-1")
    #expect(await Self.endpoint(project: String?.none).answer(Self.get("/computeMetadata/v1/project/project-id")).status == 404)
    #expect(await e.answer(Self.get("/computeMetadata/v1/universe/universe-domain")).bodyText == "googleapis.com")
    let ping = await e.answer(Self.get("/"))
    #expect(ping.status == 200)
    #expect(ping.headers.contains { $0.name == "Metadata-Flavor" && $0.value == "Google" })
    #expect(await e.answer(Self.get("/computeMetadata/v1/instance")).status == 200)
    for unknown in ["/computeMetadata/v1/instance/hostname", "/computeMetadata/v2/x", "/favicon.ico", Self.sa + "default/identity"] {
      #expect(await e.answer(Self.get(unknown)).status == 404)
    }
  }

  @Test func withoutMetadataFlavorOrThroughAProxyNothingIsAnswered() async {
    let asked = Recorded<[String]?>()
    let e = Self.endpoint(asked: asked)
    for request in [
      Self.get(Self.sa + "default/token", flavor: false), Self.get("/", flavor: false),
      Self.get(Self.sa + "default/token", extra: ["x-forwarded-for": "10.0.0.1"]),
    ] {
      let reply = await e.answer(request)
      #expect(reply.status == 403)
      #expect(reply.headers.contains { $0.name == "Metadata-Flavor" })
      #expect(!reply.bodyText.contains("GAT"))
    }
    #expect(asked.all.isEmpty)
  }

  @Test func notSignedInIsA403NamingLogin() async {
    let e = Self.endpoint(signedIn: false)
    for path in [Self.sa + "default/token", Self.sa + "default/?recursive=true", Self.sa + "default/email"] {
      let reply = await e.answer(Self.get(path))
      #expect(reply.status == 403)
      #expect(reply.bodyText == "tokenbroker: 'g' is not signed in; run 'tokenbroker login g'\n")
    }
  }
}
