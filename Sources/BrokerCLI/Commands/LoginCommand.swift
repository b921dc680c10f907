import BrokerCore
import BrokerProviders
import BrokerSystem

/// `tokenbroker login ACCOUNT [--device-code | --browser] [--no-open] [--login-hint H]`: the one
/// interactive command (interface.md §3). Holds the account's login lock for the whole flow, so a
/// second concurrent login exits 7 (interface.md §8).
enum LoginCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let usage = Help.usage("login")
    let a = try Arguments(
      args, valued: ["login-hint", "cookies-from"], flags: ["device-code", "browser", "no-open"], usage: usage)
    let name = try a.expectPositionals(["ACCOUNT"])[0]
    if a.flag("device-code") && a.flag("browser") {
      throw UsageError("choose one of --device-code and --browser", usage: usage)
    }
    let account = try runtime.config().requireAccount(name)
    if a.flag("browser") || (!a.flag("device-code") && account.flow == .browser) {
      throw ProviderError.unsupported("the browser sign-in is not available yet; use 'tokenbroker login \(name) --device-code'")
    }
    let lock = try LoginLock(runtimeDirectory: runtime.paths.runtimeDirectory, account: name)
    defer { withExtendedLifetime(lock) {} }
    let context = runtime.context
    let token = try await runtime.tokenService().loginWithDeviceCode(account: name) { authorization in
      let uri = TerminalText.clean(authorization.verificationURI)
      let code = TerminalText.clean(authorization.userCode)
      let minutes = max(1, authorization.expiresIn / 60)
      context.say("to sign in to '\(name)', open \(uri) and enter the code \(code) (valid for \(minutes) min)")
    }
    context.writeOutput("signed in to \(name) as \(TerminalText.clean(token.identity ?? "an unnamed user"))\n")
    return .success
  }
}
