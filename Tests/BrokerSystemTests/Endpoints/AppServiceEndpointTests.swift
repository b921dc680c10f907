import BrokerCore
import BrokerSystem
import Synchronization
import Testing

/// The App Service managed identity protocol as the SDKs call it (protocols-2.md §2.1, §2.3),
/// without sockets.
struct AppServiceEndpointTests {
  static let secret = Secret("H3ADER")

  /// An endpoint whose token source records the scopes asked and answers `outcome`.
  static func endpoint(
    _ outcome: Result<EndpointToken, EndpointFailure> = .success(EndpointToken(accessToken: Secret("AT"), expiresOn: 1_700_000_000)),
    asked: Recorded<String>? = nil
  ) -> AppServiceEndpoint {
    AppServiceEndpoint(identityHeader: secret) { scope in
      asked?.append(scope)
      return outcome
    }
  }

  static func request(
    _ query: String, path: String = AppServiceEndpoint.path, method: String = "GET",
    header: String? = "H3ADER"
  ) -> LoopbackRequest {
    LoopbackRequest(
      method: method, path: path, query: query, host: nil,
      headers: header.map { ["x-identity-header": $0, "metadata": "true"] } ?? [:])
  }

  @Test func answersTheTokenForResourceDotDefaultInTheProtocolsJSON() async {
    let asked = Recorded<String>()
    let reply = await Self.endpoint(asked: asked).answer(
      Self.request("api-version=2019-08-01&resource=https%3A%2F%2Fmanagement.core.windows.net%2F&client_id=x"))
    #expect(reply.status == 200)
    #expect(reply.contentType == "application/json")
    #expect(
      reply.bodyText
        == #"{"access_token":"AT","expires_on":"1700000000","resource":"https://management.core.windows.net/","token_type":"Bearer"}"#)
    // The resource exactly as received, trailing slash kept (Azure CLI's rule).
    #expect(asked.all == ["https://management.core.windows.net//.default"])
  }

  @Test func aMissingOrWrongHeaderGets401AndNoToken() async {
    let asked = Recorded<String>()
    let e = Self.endpoint(asked: asked)
    for header in [nil, "wrong", "H3ADER, H3ADER", "h3ader", ""] as [String?] {
      let reply = await e.answer(Self.request("api-version=2019-08-01&resource=r", header: header))
      #expect(reply.status == 401)
      #expect(reply.bodyText.contains(#""statusCode":401"#))
      #expect(!reply.bodyText.contains("AT"))
    }
    #expect(asked.all.isEmpty)
  }

  @Test func badRequestsGetTheProtocolsErrorShape() async {
    let e = Self.endpoint()
    #expect(await e.answer(Self.request("api-version=2019-08-01&resource=r", path: "/other")).status == 404)
    #expect(await e.answer(Self.request("api-version=2019-08-01&resource=r", method: "POST")).status == 405)
    let noVersion = await e.answer(Self.request("resource=r"))
    #expect(noVersion.status == 400)
    #expect(noVersion.bodyText.contains(#""error":"invalid_request""#))
    #expect(noVersion.bodyText.contains("api-version must be 2019-08-01"))
    #expect(await e.answer(Self.request("api-version=2019-08-01")).status == 400)
    #expect(await e.answer(Self.request("api-version=2019-08-01&resource=a%20b")).status == 400)
  }

  @Test func aSignInNeededIsAnErrorNamingLogin() async {
    let message = "'work' is not signed in; run 'tokenbroker login work'"
    let reply = await Self.endpoint(Result.failure(EndpointFailure(kind: .signInRequired, message: message))).answer(
      Self.request("api-version=2019-08-01&resource=r"))
    #expect(reply.status == 400)
    // MSAL Python reads statusCode and message; MSAL.NET error and error_description.
    #expect(reply.bodyText.contains(#""message":"tokenbroker: 'work' is not signed in; run 'tokenbroker login work'""#))
    #expect(reply.bodyText.contains(#""statusCode":400"#))
    #expect(reply.bodyText.contains(#""error":"interaction_required""#))
    let down = await Self.endpoint(Result.failure(EndpointFailure(kind: .unavailable, message: "x"))).answer(
      Self.request("api-version=2019-08-01&resource=r"))
    #expect(down.status == 503)
  }
}

/// Values a fake recorded, from any task.
final class Recorded<T: Sendable>: Sendable {
  private let values = Mutex<[T]>([])
  func append(_ v: T) { values.withLock { $0.append(v) } }
  var all: [T] { values.withLock { $0 } }
}
