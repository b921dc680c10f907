import BrokerCore
import BrokerProviders
import BrokerStore
import BrokerSystem

/// `tokenbroker login ACCOUNT [--scope S]... [--device-code | --browser] [--no-open] [--login-hint H]`:
/// the one interactive command (interface.md §3). `--scope` asks for those scopes instead of the
/// account's (the step-up a refresh for one resource asked for, with its claims challenge).
///
/// Order: the account's login lock (a second concurrent login exits 7 before anything else, bug-cases.md B07),
/// then the store check (a keyring that cannot take the refresh token fails with exit 5 before
/// the user signs in), then the flow: the browser with a loopback redirect, or the device code.
enum LoginCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let usage = Help.usage("login")
    let a = try Arguments(args, command: "login")
    let name = try a.expectPositionals(["ACCOUNT"])[0]
    if a.flag("device-code") && (a.flag("browser") || a.flag("no-open")) {
      throw UsageError("choose one of --device-code and --browser (or --no-open)", usage: usage)
    }
    let config = try runtime.config()
    let account = try config.requireAccount(name)
    let asked = a.values("scope").isEmpty ? nil : ScopeSet(a.values("scope"))
    if asked != nil && account.provider == .sharepoint {
      throw UsageError("--scope does not apply to sharepoint accounts; sign in to the via account with it", usage: usage)
    }
    if let status = try await CookieLogin.run(a, account: account, runtime: runtime, usage: usage) { return status }
    let flow = chooseFlow(a, account: account, environment: runtime.context.environment)
    let lock = try LoginLock(runtimeDirectory: runtime.paths.runtimeDirectory, account: name)
    defer { withExtendedLifetime(lock) {} }
    if config.settings.store == .secretService {
      // The keyring itself: the store the runtime hands out may wrap it (agent notices), and a
      // check writes nothing, so there is nothing for a wrapper to add.
      try await preflight(LibsecretStore(), context: runtime.context, timeout: config.settings.loginTimeout)
    } else if config.settings.store == .encryptedFile {
      try await preflightEncrypted(runtime: runtime)
    }

    // The server's claims challenge for those scopes, asked for now rather than remembered: it is
    // the current one, and nothing about it has to be kept between commands.
    let claims = if let asked { try await runtime.tokenService().stepUpClaims(account: name, scopes: asked) } else { String?.none }
    if claims != nil { runtime.verbose("the provider sent a claims challenge for those scopes; the sign-in sends it back") }
    let token: IssuedToken
    switch flow {
    case .browser:
      token = try await BrowserLogin.run(
        account: account, loginHint: a.value("login-hint"), open: !a.flag("no-open"), scopes: asked, claims: claims,
        runtime: runtime)
    case .deviceCode:
      let prompt = DeviceCodePrompt(account: name, context: runtime.context)
      defer { prompt.finish() }
      token = try await runtime.tokenService().loginWithDeviceCode(account: name, scopes: asked, claims: claims) { prompt.show($0) }
    }
    runtime.context.writeOutput("signed in to \(name) as \(TerminalText.clean(token.identity ?? "an unnamed user"))\n")
    return .success
  }

  /// `--device-code` or `--browser` (`--no-open` implies the browser), else the account's `flow`,
  /// else the device code for github (its preset's default, interface.md §2.2: the browser flow
  /// needs the app's secret), else the browser when a display is present and the device code
  /// otherwise (interface.md §2).
  static func chooseFlow(_ a: Arguments, account: AccountConfig, environment: [String: String]) -> LoginFlow {
    if a.flag("device-code") { return .deviceCode }
    if a.flag("browser") || a.flag("no-open") { return .browser }
    if account.provider == .github { return account.flow ?? .deviceCode }
    return account.flow ?? (hasDisplay(environment) ? .browser : .deviceCode)
  }

  /// `DISPLAY` or `WAYLAND_DISPLAY` set, and neither `SSH_CONNECTION` nor `SSH_TTY` (interface.md §2).
  static func hasDisplay(_ environment: [String: String]) -> Bool {
    func set(_ key: String) -> Bool { !(environment[key] ?? "").isEmpty }
    return (set("DISPLAY") || set("WAYLAND_DISPLAY")) && !set("SSH_CONNECTION") && !set("SSH_TTY")
  }

  /// `store = encrypted-file`: a locked (or not yet created) store is unlocked (or created) on a
  /// terminal, as `tokenbroker unlock` would; elsewhere it is exit 5 naming `tokenbroker unlock`.
  /// - Throws: `StoreError`, and what `UnlockFlow` throws.
  static func preflightEncrypted(runtime: Runtime) async throws {
    do {
      try await runtime.store().preflightWrite()
    } catch let error as StoreError {
      switch error {
      case .encryptedLocked, .encryptedMissing: guard runtime.context.isInteractive else { throw error }
      default: throw error
      }
      try await UnlockFlow.run(runtime: runtime, passphraseFD: nil)
      try await runtime.store().preflightWrite()
    }
  }

  /// Fails before any sign-in when the keyring cannot take the refresh token (interface.md §7):
  /// no collection, or locked. A locked collection is unlocked through the desktop's prompt
  /// (waiting up to `login-timeout`) only on a terminal; elsewhere it is exit 5 at once.
  /// - Throws: `StoreError`.
  static func preflight(_ keyring: LibsecretStore, context: ProcessContext, timeout: Int) async throws {
    do {
      try await keyring.preflightWrite()
    } catch StoreError.locked {
      guard context.isInteractive else { throw StoreError.locked }
      context.say("the keyring is locked; asking the desktop to unlock it (waiting up to \(timeout) s)")
      try await keyring.unlock(timeout: timeout)
      try await keyring.preflightWrite()
    }
  }
}
