import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerSystem
import Glibc

/// The sign-in a click on the notification starts inside the agent (interface.md §8.1): the
/// account's flow as `login` would choose it, the browser where a display is present (through the
/// browser launcher), else the device code, shown by replacing the notification's body; bounded
/// by `login-timeout`. It takes the account's login lock like any `login` (one flow per account);
/// its success closes the notification, anything else starts the cooldown. It never prompts: the
/// agent has no terminal, and its messages go to the agent's log.
enum AgentSignIn {
  /// - Parameters:
  ///   - environment: the agent's, with its explicit config (`TOKENBROKER_CONFIG`) if any.
  ///   - log: the agent's log lines (`--verbose` only); never a code or a token.
  static func run(
    account name: String, environment: [String: String], notices: SignInNotices, log: @escaping @Sendable (String) -> Void
  ) async {
    let context = ProcessContext(
      environment: environment, uid: getuid(), readInput: { _ in nil },
      writeOutput: { log("sign-in of '\(name)': " + $0.trimmingSpaces()) },
      writeError: { log("sign-in of '\(name)': " + $0.trimmingSpaces()) }, isInteractive: false)
    let runtime = Runtime(context: context, globals: GlobalOptions())
    do {
      let account = try runtime.config().requireAccount(name)
      let lock = try LoginLock(runtimeDirectory: runtime.paths.runtimeDirectory, account: name)
      defer { withExtendedLifetime(lock) {} }
      let flow = account.flow ?? (LoginCommand.hasDisplay(environment) ? .browser : .deviceCode)
      switch flow {
      case .browser where LoginCommand.hasDisplay(environment):
        _ = try await BrowserLogin.run(account: account, loginHint: nil, open: true, runtime: runtime)
      default:
        _ = try await runtime.tokenService().loginWithDeviceCode(account: name) { authorization in
          notices.showCode(account: name, userCode: authorization.userCode, at: authorization.verificationURI)
        }
      }
      log("sign-in of '\(name)' from its notification succeeded")
      await notices.flowEnded(account: name, succeeded: true)
    } catch {
      log("sign-in of '\(name)' from its notification did not complete: \(ErrorMapping.map(error).message)")
      await notices.flowEnded(account: name, succeeded: false)
    }
  }
}
