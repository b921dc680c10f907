import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// `provider = github` (interface.md §2.2) against GitHub's documented replies: form-encoded or
/// JSON, errors with HTTP 200, its own error codes.
@Suite struct GitHubProviderTests {
  static let form = "application/x-www-form-urlencoded; charset=utf-8"

  static func account(authority: String = "https://ghe.example.test", secret: String? = "SENTINEL-secret") -> AccountConfig {
    var a = AccountConfig(name: "gh", provider: .github)
    a.clientID = "Iv1.app"
    a.clientSecret = secret.map(Secret.init)
    a.authority = authority
    return a
  }

  static func provider(_ transport: FakeTransport, account: AccountConfig = account()) throws -> GitHubProvider {
    try GitHubProvider(account: account, settings: BrokerSettings(), transport: transport, time: FakeTime(now: Fixtures.start))
  }

  @Test func endpointsAreUnderTheAuthorityAndTheAPIIsGitHubsOrGHESs() {
    let ghes = GitHubEndpoints(account: Self.account())
    #expect(ghes.deviceAuthorization == "https://ghe.example.test/login/device/code")
    #expect(ghes.token == "https://ghe.example.test/login/oauth/access_token")
    #expect(ghes.authorization == "https://ghe.example.test/login/oauth/authorize")
    #expect(ghes.user == "https://ghe.example.test/api/v3/user")
    let dotcom = GitHubEndpoints(account: Self.account(authority: "https://github.com"))
    #expect(dotcom.user == "https://api.github.com/user")
    var custom = Self.account()
    custom.apiEndpoint = "https://api.example.test/v9"
    #expect(GitHubEndpoints(account: custom).user == "https://api.example.test/v9/user")
  }

  @Test func theDeviceFlowSendsNoSecretAndReadsFormRepliesAndErrorsWithStatus200() async throws {
    let transport = FakeTransport([
      .text("device_code=DC-SENTINEL&expires_in=900&interval=5&user_code=WDJB-MJHT&verification_uri=https%3A%2F%2Fghe.example.test%2Flogin%2Fdevice",
            status: 200, contentType: Self.form),
      .text("error=authorization_pending&error_description=pending", status: 200, contentType: Self.form),
      .json(#"{"error":"slow_down","interval":10}"#),
      .text("access_token=ghu_AT&expires_in=28800&refresh_token=ghr_RT&refresh_token_expires_in=15897600&scope=repo%2Cgist&token_type=bearer",
            status: 200, contentType: Self.form),
      .json(#"{"login":"octocat","id":583231}"#),
    ])
    let provider = try Self.provider(transport)
    let authorization = try await provider.startDeviceAuthorization(scopes: ScopeSet(["repo", "gist"]))
    #expect(authorization.userCode == "WDJB-MJHT")
    #expect(authorization.interval == 5)
    let grant = try await provider.pollDeviceAuthorization(authorization, scopes: ScopeSet(["repo"]), timeout: 300)
    #expect(grant.accessToken == Secret("ghu_AT"))
    #expect(grant.refreshToken == Secret("ghr_RT"))
    #expect(grant.expiresOn == Fixtures.start + 15 + 28800)  // after 5 s, then 10 s (slow_down's interval)
    #expect(grant.scopes == ["repo", "gist"])
    #expect(grant.identity?.username == "octocat")
    for request in transport.requests.prefix(4) {
      #expect(request.formFields["client_id"] == "Iv1.app")
      #expect(request.formFields["client_secret"] == nil)
      #expect(request.headers.contains(HTTPHeader("Accept", "application/json")))
      #expect(!request.headers.contains { $0.name == "Authorization" })
    }
    #expect(transport.requests[4].url == "https://ghe.example.test/api/v3/user")
    #expect(transport.requests[4].headers.contains(HTTPHeader("Authorization", "Bearer ghu_AT")))
  }

  @Test func aDisabledDeviceFlowEndsTheSignInNamingTheBrowser() async throws {
    let transport = FakeTransport([
      .json(#"{"error":"device_flow_disabled","error_description":"Device flow has not been enabled"}"#, status: 400)
    ])
    let error = await #expect(throws: ProviderError.self) {
      try await Self.provider(transport).startDeviceAuthorization(scopes: ScopeSet(["repo"]))
    }
    guard case .loginFailed(_, let reason) = error else { Issue.record("\(String(describing: error))"); return }
    #expect(reason.contains("tokenbroker login gh --browser"))
  }

  @Test func expiredAndDeniedEndTheFlow() async throws {
    let device = FakeTransport.Reply.json(
      #"{"device_code":"DC","user_code":"ABCD-EFGH","verification_uri":"https://ghe.example.test/login/device","expires_in":900,"interval":5}"#)
    for (answer, expected) in [("expired_token", "expired"), ("access_denied", "declined")] {
      let transport = FakeTransport([device, .json(#"{"error":"\#(answer)"}"#)])
      let provider = try Self.provider(transport)
      let authorization = try await provider.startDeviceAuthorization(scopes: ScopeSet(["repo"]))
      let error = await #expect(throws: ProviderError.self) {
        try await provider.pollDeviceAuthorization(authorization, scopes: ScopeSet(["repo"]), timeout: 300)
      }
      switch error {
      case .deviceCodeExpired?: #expect(expected == "expired")
      case .declined?: #expect(expected == "declined")
      default: Issue.record("\(answer): \(String(describing: error))")
      }
    }
  }

  @Test func aRefreshSendsTheSecretInTheBody() async throws {
    let transport = FakeTransport([
      .json(#"{"access_token":"ghu_NEW","expires_in":28800,"refresh_token":"ghr_NEW","refresh_token_expires_in":15897600,"scope":"","token_type":"bearer"}"#)
    ])
    let grant = try await Self.provider(transport).refresh(Secret("ghr_OLD"), scopes: ScopeSet(["repo"]))
    #expect(grant.refreshToken == Secret("ghr_NEW"))
    #expect(grant.refreshTokenExpiresOn == Fixtures.start + 15897600)
    #expect(transport.requests[0].formFields == [
      "client_id": "Iv1.app", "client_secret": "SENTINEL-secret", "grant_type": "refresh_token", "refresh_token": "ghr_OLD",
    ])
  }

  @Test func badRefreshTokenWithStatus200IsADeadGrantAndOtherErrorsAreNot() async throws {
    let dead = FakeTransport([.json(#"{"error":"bad_refresh_token","error_description":"The refresh token passed is incorrect or expired."}"#)])
    await #expect(throws: RefreshTokenRejected.self) {
      try await Self.provider(dead).refresh(Secret("ghr_OLD"), scopes: ScopeSet(["repo"]))
    }
    let client = FakeTransport([.json(#"{"error":"incorrect_client_credentials"}"#)])
    let error = await #expect(throws: ProviderError.self) {
      try await Self.provider(client).refresh(Secret("ghr_OLD"), scopes: ScopeSet(["repo"]))
    }
    guard case .rejected(_, "incorrect_client_credentials", let detail) = error else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(!detail.contains("SENTINEL"))
    let down = FakeTransport([.json("{}", status: 502), .json("{}", status: 502), .json("{}", status: 502)])
    await #expect(throws: ProviderError.self) {
      try await Self.provider(down).refresh(Secret("ghr_OLD"), scopes: ScopeSet(["repo"]))
    }
  }
}
