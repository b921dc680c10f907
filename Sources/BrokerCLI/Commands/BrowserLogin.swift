import BrokerCore
import BrokerProviders
import BrokerStore
import BrokerSystem

/// The terminal and browser side of `login --browser` (RFC 8252): binds the loopback listener,
/// opens the browser (or prints the URL), and waits for the redirect; on a terminal the user may
/// paste the redirect URL instead (the browser on another machine). The first redirect whose
/// `state` matches wins; anything else gets an error page and the wait goes on (bug-cases.md B26).
enum BrowserLogin {
  /// - Parameters:
  ///   - open: start the browser (`--no-open`: print the URL only).
  ///   - scopes, claims: as `TokenService.loginWithBrowser` takes them.
  /// - Throws: what `TokenService.loginWithBrowser` throws; `SystemError.listener` when the
  ///   redirect port cannot be bound.
  static func run(
    account: AccountConfig, loginHint: String?, open: Bool, scopes: ScopeSet? = nil, claims: String? = nil,
    runtime: Runtime
  ) async throws -> IssuedToken {
    let host = Providers.loopbackHost(for: account)
    let listener = try LoopbackListener(port: account.redirectPort, ipv6: host.wantsIPv6)
    defer { listener.stop() }
    let settings = try runtime.config().settings
    let context = runtime.context
    let verbose = runtime.diagnostics.isOn
    let name = account.name
    let signIn = BrowserSignIn(port: listener.port, sha256: { SHA256.digest($0) }) { authorization in
      await announce(authorization, account: name, open: open, browser: settings.browser, context: context)
      context.say("waiting up to \(settings.loginTimeout) s (login-timeout) for the sign-in to finish; Ctrl-C cancels")
      return try await wait(
        for: authorization, account: name, listener: listener, timeout: settings.loginTimeout, context: context,
        verbose: verbose)
    }
    return try await runtime.tokenService().loginWithBrowser(
      account: name, loginHint: loginHint, scopes: scopes, claims: claims, signIn: signIn)
  }

  /// Opens the browser detached, or prints the URL (stderr: it is a message, not data).
  static func announce(
    _ authorization: BrowserAuthorization, account: String, open: Bool, browser: String?, context: ProcessContext
  ) async {
    let url = authorization.url
    if open {
      let candidates = BrowserLauncher.candidates(configured: browser, environment: context.environment)
      do {
        let program = try await BrowserLauncher.open(url: url, candidates: candidates, environment: context.environment)
        context.say("opened \(TerminalText.clean(program)) to sign in to '\(account)'; if no browser shows up, open \(url)")
      } catch SystemError.call(_, let program, let reason) {
        context.say("could not start the browser '\(TerminalText.clean(program))' (\(reason)); to sign in to '\(account)', open \(url)")
      } catch {
        context.say("could not start a browser (\(error)); to sign in to '\(account)', open \(url)")
      }
    } else {
      context.say("to sign in to '\(account)', open \(url)")
    }
    if context.isInteractive {
      context.say("if that browser runs on another machine, paste the address it ends on (\(authorization.redirectURI)…) here")
    }
  }

  /// Races the listener against pasted lines (on a terminal) until one brings the answer.
  /// - Throws: `ProviderError.loginTimedOut` after `timeout` seconds.
  static func wait(
    for authorization: BrowserAuthorization, account: String, listener: LoopbackListener, timeout: Int,
    context: ProcessContext, verbose: Bool
  ) async throws -> RedirectVerdict {
    let state = authorization.state
    let lines = context.isInteractive ? try TerminalLines() : nil
    return try await withThrowingTaskGroup(of: RedirectVerdict.self) { group in
      group.addTask {
        let outcome = try await listener.serve(timeout: Double(timeout)) { request in
          reply(to: request, state: state, account: account, context: context, verbose: verbose)
        }
        guard case .finished(let verdict) = outcome else {
          throw ProviderError.loginTimedOut(account: account, seconds: timeout)
        }
        return verdict
      }
      if let lines {
        group.addTask {
          try await lines.read { line in
            let verdict = AuthorizationRedirect.check(pasted: line, state: state)
            switch verdict {
            case .code, .error: return verdict
            case .foreign, .incomplete:
              context.say("that is not the address this sign-in ends on; paste the whole address from the browser")
              return nil
            }
          }
        }
      }
      defer { group.cancelAll() }
      guard let first = try await group.next() else { throw CancellationError() }
      return first
    }
  }

  /// The listener's answer to one request: only `GET /` with the right `state` ends the wait.
  static func reply(
    to request: LoopbackRequest, state: String, account: String, context: ProcessContext, verbose: Bool
  ) -> LoopbackReply<RedirectVerdict> {
    guard request.path == "/" else { return LoopbackReply(status: 404, page: LoopbackPage.notFound) }
    guard request.method == "GET" else { return LoopbackReply(status: 405, page: LoopbackPage.methodNotAllowed) }
    let verdict = AuthorizationRedirect.check(query: request.query, state: state)
    switch verdict {
    case .code:
      return LoopbackReply(status: 200, page: LoopbackPage.success(account: account), result: verdict)
    case .error(let info):
      return LoopbackReply(
        status: 200, page: LoopbackPage.failure(account: account, error: info.error, detail: info.detail), result: verdict)
    case .foreign:
      if verbose { context.say("ignored a redirect without this sign-in's state (answered 400); still waiting") }
      return LoopbackReply(status: 400, page: LoopbackPage.foreign)
    case .incomplete:
      return LoopbackReply(status: 400, page: LoopbackPage.incomplete)
    }
  }
}
