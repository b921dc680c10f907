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
      projectNumber: { .success("123456789012") },
      token: { scopes in
        asked?.append(scopes)
        return signedIn ? .success(EndpointToken(accessToken: Secret("GAT"), expiresOn: 10_000)) : .failure(notSignedIn)
      },
      idToken: { audience in
        guard signedIn else { return .failure(notSignedIn) }
        return .success(audience == "client-1" ? Secret("GIDT") : nil)
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
    for unknown in ["/computeMetadata/v1/instance/hostname", "/computeMetadata/v2/x", "/favicon.ico", Self.sa + "default/nope"] {
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

  @Test func numericProjectIDBothUniverseSpellingsAndTheHeaderOnEveryReply() async {
    let e = Self.endpoint()
    #expect(await e.answer(Self.get("/computeMetadata/v1/project/numeric-project-id")).bodyText == "123456789012")
    #expect(await Self.endpoint(project: String?.none).answer(Self.get("/computeMetadata/v1/project/numeric-project-id")).status == 404)
    for spelling in ["universe-domain", "universe_domain"] {
      #expect(await e.answer(Self.get("/computeMetadata/v1/universe/" + spelling)).bodyText == "googleapis.com")
    }
    var post = Self.get("/computeMetadata/v1/project/project-id")
    post.method = "POST"
    for request in [Self.get("/computeMetadata/v1/instance/attributes/nope"), Self.get("/", flavor: false), post] {
      let reply = await e.answer(request)
      #expect(reply.status >= 400)
      #expect(reply.headers.contains { $0.name == "Metadata-Flavor" && $0.value == "Google" })
    }
  }

  @Test func recursiveDirectoriesAreJSON() async {
    let e = Self.endpoint()
    let info = #"{"aliases":["default"],"email":"user1@example.test","scopes":["openid","email","https://www.googleapis.com/auth/cloud-platform"]}"#
    let listing = await e.answer(Self.get(Self.sa + "?recursive=true"))
    #expect(listing.contentType == "application/json")
    #expect(listing.bodyText == #"{"default":"# + info + #","user1@example.test":"# + info + "}")
    #expect(await e.answer(Self.get("/computeMetadata/v1/instance/?recursive=true")).bodyText == #"{"serviceAccounts":"# + listing.bodyText + "}")
    #expect(
      await e.answer(Self.get("/computeMetadata/v1/project/?recursive=true")).bodyText
        == #"{"numericProjectId":123456789012,"projectId":"proj-1"}"#)
    #expect(await e.answer(Self.get("/computeMetadata/v1/universe/?recursive=true")).bodyText == #"{"universeDomain":"googleapis.com"}"#)
    #expect(await e.answer(Self.get("/computeMetadata/v1/?recursive=true")).bodyText.hasPrefix(#"{"instance":{"serviceAccounts":"#))
  }

  @Test func identityOnlyForTheAccountsOwnAudienceNeverAnotherToken() async {
    let e = Self.endpoint()
    let own = await e.answer(Self.get(Self.sa + "default/identity?audience=client-1&format=full"))
    #expect(own.status == 200)
    #expect(own.bodyText == "GIDT")
    for path in [Self.sa + "default/identity?audience=https://svc.example.test", Self.sa + "user1@example.test/identity?audience=x"] {
      let reply = await e.answer(Self.get(path))
      #expect(reply.status == 404)
      #expect(reply.bodyText == "tokenbroker: " + GoogleMetadataEndpoint.noIDToken + "\n")
      #expect(!reply.bodyText.contains("GAT") && !reply.bodyText.contains("GIDT"))
    }
    #expect(await e.answer(Self.get(Self.sa + "default/identity")).status == 400)
  }
}
