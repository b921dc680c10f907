import BrokerCore
import BrokerProviders

/// What `logout` and `revoke` ask git's other credential helpers to forget (bug-cases-3.md X14):
/// a caching helper in front of tokenbroker (`cache --timeout 21600`, git-credential-oauth's
/// layout) keeps the access token git handed it after a success and would serve it after the
/// sign-out, and `store` keeps it in `~/.git-credentials`. For each host the account serves
/// whose helper chain holds another helper, `git credential reject` runs once per access token
/// handed out (host, username and token; no path, so a helper that keyed it by a repository's
/// path matches too), so that every helper git asks for that host drops it.
struct GitForget {
  struct Handed {
    var host: String
    var username: String
    var tokens: [Secret]
  }

  var handed: [Handed] = []

  /// Collects, before the sign-out deletes them, the tokens `account` handed out and where.
  /// Unreadable stores and accounts not configured collect nothing.
  static func collect(account name: String, runtime: Runtime) async -> GitForget {
    guard let config = try? runtime.config(), let account = config.account(named: name),
      let details = try? await runtime.tokenService().details(account: name)
    else { return GitForget() }
    let hosts = SetupGitCommand.hostsToSetUp(config: config, accounts: [account], note: { _ in })
    let tokens = details.accessTokens.map(\.accessToken)
    return GitForget(
      handed: hosts.map { host in
        let group = config.hosts.first { $0.host == host && $0.account == name && $0.username != nil }
        let username = group?.username ?? account.gitUsername ?? details.identity ?? "tokenbroker"
        return Handed(host: host, username: username, tokens: tokens)
      })
  }

  /// Runs the rejects (after the sign-out). Never fails the command: a missing git or a failed
  /// reject is a `--verbose` line.
  func run(runtime: Runtime) async {
    guard !handed.isEmpty else { return }
    let git = GitConfig(environment: runtime.context.environment)
    let entries: [(pattern: String?, value: String)]
    do { entries = try await git.credentialHelperEntries() } catch {
      runtime.verbose("not asking git's helpers to forget the tokens: \(error)")
      return
    }
    for h in handed {
      guard let url = URLParts("https://\(h.host)/") else { continue }
      let others = GitHelperChain(entries: entries, url: url).helpers.filter { !GitHelperChain.isTokenbroker($0) }
      guard !others.isEmpty else { continue }
      let base = [("protocol", "https"), ("host", h.host), ("username", h.username)]
      let requests = h.tokens.isEmpty ? [base] : h.tokens.map { base + [("password", $0.revealed)] }
      var failed = false
      for fields in requests {
        let status = (try? await git.reject(fields)) ?? -1
        failed = failed || status != 0
      }
      runtime.verbose(
        (failed ? "git credential reject failed for https://\(h.host)" : "asked git's helpers for https://\(h.host) to forget \(h.tokens.count) token(s)")
          + " (\(others.map { "'\($0)'" }.joined(separator: ", ")))")
    }
  }
}
