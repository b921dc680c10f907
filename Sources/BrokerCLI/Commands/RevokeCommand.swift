import BrokerCore
import BrokerProviders

/// `tokenbroker revoke ACCOUNT` (interface.md §3, §6; RFC 7009; bug-cases.md B21): revokes the
/// grant at the provider where it has an endpoint (Google), then signs out locally in every case.
/// A failed revocation (network, 5xx, a refusal) still signs out locally and exits 4, saying that
/// the grant may remain at the provider and where to remove it; without libcurl nothing is tried
/// and nothing signed out (exit 4, the loader's line). Azure AD has no revocation
/// endpoint (protocols.md §2.10): local sign-out, exit 0.
enum RevokeCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let a = try Arguments(args, command: "revoke")
    let name = try a.expectPositionals(["ACCOUNT"])[0]
    let account = try runtime.config().requireAccount(name)
    let report = try await runtime.tokenService().revokeAtProvider(account: name)
    // The endpoint's host as configured names the provider: never a provider it is not.
    let provider = report.host ?? account.provider.rawValue
    let forget = await GitForget.collect(account: name, runtime: runtime)
    _ = try await LogoutCommand.signOut(name, store: runtime.store())
    try LogoutCommand.recordSignedOut(name, runtime: runtime)
    await forget.run(runtime: runtime)
    let say = runtime.context.say
    if let failure = report.failure {
      say(
        "revocation at \(provider) failed (\(failure)); signed out locally, but the grant may remain at \(provider): "
          + "remove it at \(grantsPage(account.provider, host: report.host, authority: account.authority))")
      return .providerUnavailable
    }
    switch report.outcome {
    case .revoked: say("revoked at \(provider); signed out locally")
    case .alreadyInvalid: say("\(provider) no longer knew the grant (already revoked or expired); signed out locally")
    case .noEndpoint where account.provider == .github:
      // GitHub revokes a grant only with the app's secret (interface.md §2.2): the user does it.
      say("signed out locally; revoke the grant at \(grantsPage(account.provider, host: nil, authority: account.authority))")
    case .noEndpoint: say("\(provider) has no revocation endpoint; signed out locally")
    case nil: say("'\(name)' was not signed in; nothing to revoke")
    }
    return .success
  }

  /// Where a user removes an app's access by hand: Google's and Microsoft's pages only for their
  /// own endpoints; GitHub's (and GHES's) authorised applications under the authority.
  static func grantsPage(_ provider: ProviderKind, host: String?, authority: String) -> String {
    switch provider {
    case .github: return authority + "/settings/applications"
    case .google where host == nil || host == "oauth2.googleapis.com": return "https://myaccount.google.com/permissions"
    case .azure, .sharepoint: return "https://myapps.microsoft.com (or ask your administrator to revoke the sessions)"
    default: return "the account or applications page of \(host ?? "the provider")"
    }
  }
}
