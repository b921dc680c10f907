import BrokerWire

/// Every command of `tokenbroker` (interface.md §3, §4), in the order `--help` lists them, and the
/// global options (those `GlobalOptionScan` reads). This table is the one declaration: parsing, help, the suggestions for a
/// misspelt name and the agent's routing read it; the man page, README and the three completions
/// are tested against it.
/// Which forms the agent runs is declared in BrokerWire's `AgentCommands`, which the front routes
/// with.
enum CommandTable {
  /// `--config FILE` and `--verbose`: accepted by every command anywhere before `--`.
  static let globalOptions = [CommandOption("config", .file("FILE")), CommandOption("verbose")]

  /// The values of `token get --format` (BrokerCLI's `TokenFormat`).
  static let formats = ["token", "header", "json", "env", "exec-credential", "cookiejar", "xoauth2", "oauthbearer"]
  /// The values of `token get --for` (BrokerCore's `MailProtocol`).
  static let mailProtocols = ["imap", "pop", "smtp"]
  /// The values of `account add --provider` (BrokerCore's `ProviderKind`).
  static let providers = ["azure", "google", "sharepoint", "oidc", "github"]

  private static let scope = CommandOption("scope", .text("S"))
  private static let json = CommandOption("json")

  static let all: [CommandDeclaration] = [
    CommandDeclaration(
      "login", listing: [("login ACCOUNT [options]", "sign in (browser or device code) and store the refresh token")],
      usage:
        "usage: tokenbroker login ACCOUNT [--scope S]... [--device-code | --browser] [--no-open] [--login-hint H] [--cookies-from FILE]",
      forms: [
        CommandForm(
          arguments: ["ACCOUNT"],
          options: [
            scope, CommandOption("device-code"), CommandOption("browser"), CommandOption("no-open"),
            CommandOption("login-hint", .text("H")), CommandOption("cookies-from", .file("FILE")),
          ])
      ]),
    CommandDeclaration(
      "token", listing: [("token get ACCOUNT [options]", "print a valid access token (refreshes silently)")],
      usage:
        "usage: tokenbroker token get ACCOUNT [--scope S]... [--for imap|pop|smtp] [--min-valid SECONDS] [--force-refresh] [--wait SECONDS] [--claims C] [--format token|header|json|env|exec-credential|cookiejar|xoauth2|oauthbearer | --json] [--user U] [--host H] [--port P]",
      forms: [
        CommandForm(
          "get", arguments: ["ACCOUNT"],
          options: [
            scope, CommandOption("for", .choice("P", mailProtocols)), CommandOption("min-valid", .text("SECONDS")),
            CommandOption("force-refresh"), CommandOption("wait", .text("SECONDS")), CommandOption("claims", .text("C")),
            CommandOption("format", .choice("F", formats)),
            json, CommandOption("user", .text("U")), CommandOption("host", .text("H")), CommandOption("port", .text("P")),
          ])
      ]),
    CommandDeclaration(
      "accounts", listing: [("accounts [--json | --names]", "list accounts and whether they are signed in")],
      usage: "usage: tokenbroker accounts [--json | --names]",
      forms: [CommandForm(options: [json, CommandOption("names")])]),
    CommandDeclaration(
      "status", listing: [("status [ACCOUNT | --url URL] [--json]", "what is signed in and cached; what serves a URL")],
      usage: "usage: tokenbroker status [ACCOUNT] [--json] | status --url URL [--json]",
      forms: [CommandForm(arguments: ["ACCOUNT"], options: [CommandOption("url", .text("URL")), json])]),
    CommandDeclaration(
      "logout", listing: [("logout ACCOUNT | --all", "delete the account's tokens from the store")],
      usage: "usage: tokenbroker logout ACCOUNT | --all", forms: [CommandForm(arguments: ["ACCOUNT"], options: [CommandOption("all")])]),
    CommandDeclaration(
      "revoke", listing: [("revoke ACCOUNT", "revoke at the provider where possible, then log out")],
      usage: "usage: tokenbroker revoke ACCOUNT", forms: [CommandForm(arguments: ["ACCOUNT"])]),
    CommandDeclaration(
      "get", listing: [("get | store | erase | capability", "git credential helper actions (credential.helper = tokenbroker)")], usage: gitUsage,
      forms: [CommandForm()]),
    CommandDeclaration(
      "store", listing: [], usage: gitUsage, helpTopic: "get",
      forms: [CommandForm()]),
    CommandDeclaration(
      "erase", listing: [], usage: gitUsage, helpTopic: "get",
      forms: [CommandForm()]),
    CommandDeclaration(
      "capability", listing: [], usage: gitUsage, helpTopic: "get",
      forms: [CommandForm()]),
    CommandDeclaration(
      "setup-git", listing: [("setup-git [ACCOUNT] [--dry-run]", "make git use tokenbroker for the accounts' hosts")],
      usage: "usage: tokenbroker setup-git [ACCOUNT] [--dry-run]",
      forms: [CommandForm(arguments: ["ACCOUNT"], options: [CommandOption("dry-run")])]),
    CommandDeclaration(
      "mail", listing: [("mail setup ACCOUNT CLIENT", "print a mail client's configuration (msmtp, mbsync, neomutt, curl)")],
      usage: "usage: tokenbroker mail setup ACCOUNT msmtp|mbsync|neomutt|curl [--user U] [--imap HOST[:PORT]] [--smtp HOST[:PORT]]",
      forms: [
        CommandForm(
          "setup", arguments: ["ACCOUNT", "CLIENT"],
          options: [
            CommandOption("user", .text("U")), CommandOption("imap", .text("HOST[:PORT]")),
            CommandOption("smtp", .text("HOST[:PORT]")),
          ])
      ]),
    CommandDeclaration(
      "account", listing: [
        ("account add NAME --provider P ...", "add an account to the config file (comments are kept)"),
        ("account remove NAME", "remove an account from the config file"),
      ],
      usage: "usage: tokenbroker account add NAME --provider P [--KEY VALUE]... [--replace] | account remove NAME",
      forms: [
        CommandForm(
          "add", arguments: ["NAME"], options: [CommandOption("provider", .choice("P", providers)), CommandOption("replace")],
          takesAccountKeys: true),
        CommandForm("remove", arguments: ["NAME"]),
      ]),
    CommandDeclaration(
      "agent", listing: [("agent run | start | stop | status", "the resident agent that caches access tokens")],
      usage: "usage: tokenbroker agent run | start [--json] | stop | status [--json]",
      forms: [CommandForm("run"), CommandForm("start", options: [json]), CommandForm("stop"), CommandForm("status", options: [json])]),
    CommandDeclaration(
      "unlock", listing: [("unlock [--passphrase-fd N] [--create]", "store = encrypted-file: hand the store's key to the agent")],
      usage: "usage: tokenbroker unlock [--passphrase-fd N] [--create]",
      forms: [CommandForm(options: [CommandOption("passphrase-fd", .descriptor("N")), CommandOption("create")])]),
    CommandDeclaration(
      "lock", listing: [("lock", "store = encrypted-file: the agent forgets the key now")], usage: "usage: tokenbroker lock",
      forms: [CommandForm()]),
    CommandDeclaration(
      "forward", listing: [("forward [--json]", "how to forward the agent to SSH hosts and containers")],
      usage: "usage: tokenbroker forward [--json]", forms: [CommandForm(options: [json])]),
    CommandDeclaration(
      "exec", listing: [("exec ACCOUNT [ACCOUNT] -- COMMAND", "run COMMAND with Azure and Google SDK credential endpoints")],
      usage: "usage: tokenbroker exec ACCOUNT [ACCOUNT] -- COMMAND [ARG]...",
      forms: [CommandForm(arguments: ["ACCOUNT", "ACCOUNT", "--", "COMMAND"])]),
    CommandDeclaration(
      "version", listing: [("version", "versions of tokenbroker, libcurl and libsecret")],
      usage: "usage: tokenbroker version [--json]", forms: [CommandForm(options: [json])]),
  ]

  private static let gitUsage = "usage: tokenbroker get | store | erase | capability   (reads a git credential request on stdin)"

  /// The declaration of the command word `name`, or nil for an unknown one.
  static func command(_ name: String) -> CommandDeclaration? {
    for c in all where c.name == name { return c }
    return nil
  }
}
