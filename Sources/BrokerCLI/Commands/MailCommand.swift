import BrokerCore

/// `tokenbroker mail setup ACCOUNT CLIENT [--user U] [--imap HOST[:PORT]] [--smtp HOST[:PORT]]`:
/// prints a complete configuration for a mail client (`MailClientConfig`) that gets its tokens
/// from `token get ACCOUNT --for …` (README, "Mail clients"). The servers are the provider's
/// (`MailServers`) unless given; the user is `--user` or the signed-in identity. Writes nothing.
enum MailCommand {
  /// Clients `mail setup` declines, with why.
  static let declined = [
    "fetchmail": "fetchmail 6.4 (Debian 12) has no OAuth; use mbsync to fetch mail",
  ]

  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let usage = Help.usage("mail")
    guard args.first == "setup" else {
      throw UsageError(args.first.map { "unknown subcommand 'mail \($0)'" } ?? "missing subcommand (setup)", usage: usage)
    }
    let a = try Arguments(Array(args.dropFirst()), command: "mail", subcommand: "setup")
    let positionals = try a.expectPositionals(["ACCOUNT", "CLIENT"])
    let (name, client) = (positionals[0], positionals[1])
    if let why = declined[client] { throw UsageError("mail setup cannot set up \(client): \(why)", usage: usage) }
    guard MailClientConfig.clients.contains(client) else {
      throw UsageError("unknown mail client '\(client)' (\(MailClientConfig.clients.joined(separator: ", ")))", usage: usage)
    }
    let account = try runtime.config().requireAccount(name)
    _ = try MailScopes.scopes(for: .imap, account: account)  // a provider without mail tokens is a config error
    func server(_ p: MailProtocol) throws -> MailServer {
      if let text = a.value(p.rawValue) {
        guard let s = MailServer(text, for: p) else { throw UsageError("--\(p.rawValue) takes HOST[:PORT]; got '\(text)'", usage: usage) }
        return s
      }
      guard let s = MailServers.server(for: p, account: account) else {
        throw UsageError("'\(name)' is an \(account.provider.rawValue) account, whose mail servers tokenbroker does not know; pass --imap HOST[:PORT] and --smtp HOST[:PORT]", usage: usage)
      }
      return s
    }
    let (imap, smtp) = (try server(.imap), try server(.smtp))
    var user = a.value("user")
    if user == nil { user = try await runtime.tokenService().signedInIdentity(account: name) }
    guard let user else {
      throw HelperError(
        status: .signInRequired,
        description: "'\(name)' is not signed in, and the configuration names your address; run 'tokenbroker login \(name)' first, or pass --user ADDRESS")
    }
    let program = InstalledProgram.path(
      of: "tokenbroker", executable: runtime.context.executable, path: runtime.context.environment["PATH"])
    let config = MailClientConfig(
      account: name, user: user, program: program ?? "tokenbroker", imap: imap, smtp: smtp, xoauth2Only: account.provider == .azure)
    runtime.context.writeOutput(config.render(client) ?? "")
    if account.mail.isEmpty {
      runtime.context.say("note: add 'mail = imap smtp' to [account \(name)] so that IMAP and SMTP share one token and one refresh")
    }
    return .success
  }
}
