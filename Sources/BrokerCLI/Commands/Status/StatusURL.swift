import BrokerCore

/// `status --url URL`: which rule and account serve the URL (host resolution with the URL's path,
/// as git sends it with `useHttpPath`; interface.md §2.1) and which credential helpers git runs
/// for it, with a warning for each other one that can answer first or keep tokenbroker's tokens
/// (bug-cases-3.md X14).
enum StatusURL {
  /// - Throws: `UsageError` for a URL that is not `https://…` or `http://…`; `ConfigError`.
  static func resolve(_ text: String, config: BrokerConfig, runtime: Runtime) async throws
    -> (report: StatusReport.URLStatus, account: AccountConfig?)
  {
    guard let url = URLParts(text), url.scheme == "https" || url.scheme == "http" else {
      throw UsageError("'\(text)' is not an http(s) URL", usage: Help.usage("status"))
    }
    let resolver = try HostResolver(config: config)
    let path = url.path.isEmpty ? nil : url.path
    // git sends the path only where useHttpPath is set (setup-git sets it for hosts with path groups).
    let match = resolver.resolve(host: url.host, path: resolver.hasPathGroups(host: url.host) ? path : nil)
    let entries = (try? await GitConfig(environment: runtime.context.environment).credentialHelperEntries()) ?? []
    let chain = GitHelperChain(entries: entries, url: url)
    var warnings = match == nil ? [] : chain.warnings()
    if match == nil && resolver.hasPathGroups(host: url.host) {
      warnings.append("only [host \(url.host)/PATH] groups serve this host, none of them this path; add one, or a [host \(url.host)] group")
    }
    if chain.helpers.contains("tokenbroker"),
      let missing = GitHelperChain.missingProgramWarning(path: runtime.context.environment["PATH"])
    {
      warnings.append(missing)
    }
    let report = StatusReport.URLStatus(
      url: text, host: url.host, path: path, rule: match?.rule, account: match?.account.name, scopes: match?.scopes,
      username: match?.username, token: match == nil ? nil : "sign-in", token_expires_on: nil, helpers: chain.helpers,
      warnings: warnings)
    return (report, match?.account)
  }
}
