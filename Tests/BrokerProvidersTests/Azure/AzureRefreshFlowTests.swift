import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerProviders

/// Refresh requests and the classification of their errors (protocols.md §2.4, §2.7; interface.md §6).
@Suite struct AzureRefreshFlowTests {
  let scopes = ScopeSet([Fixtures.graph])

  func refresh(_ replies: [FakeTransport.Reply], token: String = "RT1") async throws -> (TokenGrant, FakeTransport) {
    let transport = FakeTransport(replies)
    let grant = try await Fixtures.provider(transport, FakeTime(now: Fixtures.start)).refresh(Secret(token), scopes: scopes)
    return (grant, transport)
  }

  func failure(_ reply: FakeTransport.Reply, token: String = "RT1") async -> (any Error)? {
    do {
      _ = try await refresh([reply], token: token)
      return nil
    } catch {
      return error
    }
  }

  @Test func sendsAPublicClientRefreshRequest() async throws {
    let (grant, transport) = try await refresh([Fixtures.tokenReply()])
    let r = transport.requests[0]
    #expect(r.url == Fixtures.tokenURL)
    #expect(r.formFields == [
      "client_id": "11111111-2222-3333-4444-555555555555", "grant_type": "refresh_token", "refresh_token": "RT1",
      "scope": "https://graph.microsoft.com/.default offline_access",
    ])
    #expect(grant.expiresOn == Fixtures.start + 3599)
  }

  @Test func invalidGrantRejectsTheRefreshToken() async {
    let error = await failure(
      Fixtures.oauthError("invalid_grant", description: "AADSTS50173: The provided grant has expired due to it being revoked.", codes: [50173]))
    let rejected = error as? RefreshTokenRejected
    #expect(rejected?.reason == "the refresh token was rejected (invalid_grant, AADSTS50173: it was revoked or its session ended)")
    #expect(
      rejected?.description
        == "sign-in needed for 'work': the refresh token was rejected (invalid_grant, AADSTS50173: it was revoked or its session ended); run 'tokenbroker login work'")
  }

  @Test(arguments: [
    Fixtures.oauthError("invalid_grant", description: "AADSTS50076: you must use multi-factor authentication", codes: [50076], suberror: "basic_action"),
    Fixtures.oauthError("invalid_grant", description: "AADSTS65001: The user has not consented", codes: [65001], suberror: "consent_required"),
    Fixtures.oauthError("invalid_grant", codes: [50079]),
    Fixtures.oauthError("invalid_grant", extra: #","claims":"{\"access_token\":{}}""#),
    Fixtures.oauthError("interaction_required", codes: [50076]),
    Fixtures.oauthError("consent_required", codes: [65001]),
  ])
  func interactionNeedsKeepTheRefreshToken(_ reply: FakeTransport.Reply) async {
    let error = await failure(reply)
    guard case .stepUpRequired(let account, let reason, let scopes, _) = error as? ProviderError else {
      Issue.record("got \(String(describing: error))")
      return
    }
    #expect(account == "work")
    #expect(reason != ProviderError.notSignedIn)
    #expect(scopes == [Fixtures.graph])
  }

  /// The message names the resource's scopes and the login that asks for them;
  /// the claims challenge travels with the error (for that login), never in the message.
  @Test func aStepUpNamesTheScopesAndTheLoginThatAsksForThem() async {
    let claims = #"{"access_token":{"capolids":{"essential":true,"values":["p1"]}}}"#
    let escaped = claims.replacing("\"", with: "\\\"")
    let error = await failure(
      Fixtures.oauthError(
        "interaction_required", description: "AADSTS50076: you must use multi-factor authentication", codes: [50076],
        suberror: "basic_action", extra: #","claims":"\#(escaped)""#))
    guard let error = error as? ProviderError, case .stepUpRequired(_, _, _, let sent) = error else {
      Issue.record("got \(String(describing: error))")
      return
    }
    #expect(sent == claims)
    #expect(
      error.description
        == "sign-in needed for 'work' to use \(Fixtures.graph): multi-factor authentication is needed for this resource "
        + "(interaction_required, basic_action, AADSTS50076); run 'tokenbroker login work --scope \(Fixtures.graph)'")
  }

  @Test func aClaimsValueThatHoldsTheRefreshTokenIsNotKept() async {
    let error = await failure(Fixtures.oauthError("interaction_required", extra: #","claims":"{\"x\":\"RT1\"}""#))
    guard case .stepUpRequired(_, _, _, let sent) = error as? ProviderError else {
      Issue.record("got \(String(describing: error))")
      return
    }
    #expect(sent == nil)
  }

  /// Conditional Access refusing one resource to this device (AADSTS530003, 50131, …) arrives as
  /// `invalid_grant` without a `suberror`: a policy refusal for those scopes, never a dead grant
  /// (interface.md §6), whatever `error` carries the code.
  @Test(arguments: [
    (530003, "invalid_grant", "a device managed by the organisation"),
    (50131, "invalid_grant", "refused this device or request"),
    (530032, "invalid_grant", "security policy"),
    (53002, "invalid_grant", "approved client applications"),
    (53000, "interaction_required", "a compliant device"),
    (53001, "invalid_grant", "domain"),
  ])
  func Y08_conditionalAccessDeviceRefusalsKeepTheRefreshToken(code: Int, error: String, named: String) async {
    let reply = await failure(
      Fixtures.oauthError(error, description: "AADSTS\(code): Your device is required to be managed to access this resource.", codes: [code]))
    guard case .refusedByPolicy(let account, let reason, let scopes) = reply as? ProviderError else {
      Issue.record("AADSTS\(code): got \(String(describing: reply))")
      return
    }
    #expect(account == "work" && scopes == [Fixtures.graph])
    #expect(reason.contains(named) && reason.contains("AADSTS\(code)"), "\(reason)")
    let message = (reply as? ProviderError)?.description ?? ""
    #expect(message.hasPrefix("'work' may not use \(Fixtures.graph) from this machine: "))
    #expect(message.contains("the sign-in is kept") && message.contains("does not satisfy the policy"))
  }

  /// Interaction codes sent as `invalid_grant` without a `suberror` (MFA registration, 53004 and
  /// 50072) are step-ups for the resource, not dead grants.
  @Test(arguments: [53004, 50072, 53003])
  func Y08_interactionCodesSentAsInvalidGrantAreStepUps(code: Int) async {
    let reply = await failure(Fixtures.oauthError("invalid_grant", description: "AADSTS\(code): policy", codes: [code]))
    guard case .stepUpRequired = reply as? ProviderError else {
      Issue.record("AADSTS\(code): got \(String(describing: reply))")
      return
    }
  }

  @Test func invalidGrantWithBadTokenSuberrorIsARejection() async {
    let error = await failure(Fixtures.oauthError("invalid_grant", codes: [9002313], suberror: "bad_token"))
    #expect(error is RefreshTokenRejected)
  }

  @Test func test_X05_invalidClientIsAConfigurationProblemNamingTheClient() async {
    let error = await failure(Fixtures.oauthError("invalid_client", description: "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.", codes: [7000218], status: 401))
    guard case .clientRejected(_, let host, let clientID, let method, let detail) = error as? ProviderError else {
      Issue.record("got \(String(describing: error))")
      return
    }
    #expect(host == "login.microsoftonline.com" && clientID == Fixtures.account().clientID && method == "none")
    #expect(detail.contains("Allow public client flows"))
    #expect(detail.hasSuffix("(AADSTS7000218)"))
  }

  @Test func temporarilyUnavailableIsUnavailable() async {
    let error = await failure(Fixtures.oauthError("temporarily_unavailable"))
    guard case .unavailable = error as? ProviderError else { Issue.record("got \(String(describing: error))"); return }
  }

  /// X07: Entra sends its request-loop detection as `invalid_grant` AADSTS50196: throttling, not
  /// a dead refresh token; as any other error with that code.
  @Test func X07_requestLoopIsThrottlingNotADeadToken() async {
    for error in ["invalid_grant", "temporarily_unavailable"] {
      let reply = await failure(Fixtures.oauthError(error, description: "AADSTS50196: loop", codes: [50196]))
      guard case .throttled(_, _, let seconds, let reason) = reply as? ProviderError else {
        Issue.record("got \(String(describing: reply))")
        return
      }
      #expect(seconds == ThrottleWait.requestLoopSeconds)
      #expect(reason.contains("request loop") && reason.contains("AADSTS50196"))
    }
    // Only in the description: still the code.
    let described = await failure(Fixtures.oauthError("invalid_grant", description: "AADSTS50196: The server terminated"))
    guard case .throttled = described as? ProviderError else { Issue.record("got \(String(describing: described))"); return }
  }

  @Test func aNonJSONSuccessIsUnavailable() async {
    let error = await failure(.text("<html>Welcome to the hotel Wi-Fi</html>", status: 200))
    #expect(
      error as? ProviderError
        == .unavailable(
          host: "login.microsoftonline.com",
          detail: "unexpected reply from login.microsoftonline.com (HTTP 200, text/html, not JSON); "
            + "a proxy or portal may be intercepting"))
  }

  /// B29: an `error_description` that echoes the secrets never reaches a message.
  @Test func secretsEchoedByTheProviderNeverShow() async {
    let rt = "RT-SENTINEL-0c1f9"
    let replies: [FakeTransport.Reply] = [
      Fixtures.oauthError("invalid_grant", description: "AADSTS50173: token \(rt) revoked", codes: [50173]),
      Fixtures.oauthError("invalid_grant", description: "Token \(rt) has been expired or revoked."),
      Fixtures.oauthError("invalid_request", description: "refresh_token=\(rt) is malformed"),
      Fixtures.oauthError("\(rt)", description: rt),
      Fixtures.oauthError("interaction_required", description: "\(rt)"),
      .json(#"{"error":"temporarily_unavailable","error_description":"\#(rt)"}"#, status: 503),
      .text("<html>\(rt)</html>", status: 502),
    ]
    for reply in replies {
      let error = await failure(reply, token: rt)
      #expect(error != nil)
      #expect(!String(describing: error as Any).contains("SENTINEL"))
      #expect(!"\(error.map { "\($0)" } ?? "")".contains("SENTINEL"))
    }
  }
}
