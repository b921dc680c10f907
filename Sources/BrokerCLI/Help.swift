import BrokerCore
import BrokerWire

/// Usage lines and `--help` texts (stdout, exit 0).
enum Help {
  static let topUsage = "usage: tokenbroker [--config FILE] [--verbose] COMMAND [ARGS]"

  static let top = """
    \(topUsage)

    Keeps OAuth refresh tokens for Microsoft Entra ID (Azure AD), Google, SharePoint Online and any
    OpenID Connect provider in the Secret Service keyring (or an encrypted file), and hands fresh access
    tokens to scripts, git, docker, kubectl and, through exec, the Azure and Google SDKs and CLIs.

    commands:
    \(commandLines)
    options:
      --config FILE   read only this config file (default: /etc/tokenbroker/config, then
                      ~/.config/tokenbroker/config; also TOKENBROKER_CONFIG)
      --verbose       explain what happens on stderr: config files, host resolution, agent,
                      cache, HTTP requests, store operations, why a refresh or deletion
                      happened (never a secret); also TOKENBROKER_VERBOSE=1, e.g. for the
                      helper calls git, docker and kubectl start

    Run 'tokenbroker COMMAND --help' for a command's options.

    """

  private static let details: [String: String] = [
    "login": """
      Signs in to ACCOUNT and stores the refresh token in the keyring (dropping the account's cached
      access tokens). The browser flow (default when a display is present and not over SSH, or
      flow = browser) opens the provider's page with `browser`, TOKENBROKER_BROWSER, $BROWSER or
      xdg-open and waits (up to login-timeout) for the redirect to http://localhost:PORT/ (Azure)
      or http://127.0.0.1:PORT/ (Google; PORT: redirect-port or random), checked with state and
      PKCE. On a terminal you can paste the address the browser ends on instead. The device code
      flow prints a URL and a code to enter on any device. The keyring is checked first: locked or
      missing exits 5 before any sign-in (on a terminal a locked keyring is unlocked first). A
      second login of the same account while one is running exits 7.
        --scope S          ask for these scopes instead of the account's (repeatable): the
                           step-up (MFA, consent) that a 'token get --scope S' exiting 3 names;
                           the provider's claims challenge for them is sent along
        --browser          the browser flow
        --device-code      the device code flow
        --no-open          print the URL instead of starting a browser (implies --browser)
        --login-hint H     suggest this user name to the provider
        --cookies-from F   sharepoint mode = imported-cookies: take FedAuth and rtFa from F (a
                           Netscape cookie file or a 'Cookie:' line), check them with the site
      """,
    "token": """
      Prints a valid access token for ACCOUNT, refreshing it silently when less than
      refresh-margin (or --min-valid) seconds are left. Never interactive: exits 3 when you
      need to run 'tokenbroker login ACCOUNT'.
        --scope S          request these scopes instead of the account's (repeatable)
        --for P            a mail token for imap, pop or smtp (the provider's mail scopes, one
                           token for every protocol in the account's 'mail' key)
        --min-valid N      the token must stay valid at least N more seconds
        --force-refresh    refresh even if the cached token is still valid
        --wait N           when the account needs signing in, wait up to N seconds for a
                           sign-in (from its notification, or a login anywhere), then answer
        --claims C         the claims of a resource's insufficient_claims challenge (JSON or
                           base64): a new token is asked for with them, never the cached one
        --format F         token (default), header, json, env, exec-credential; cookie
                           accounts (sharepoint mode = cookie or imported-cookies): token
                           (name=value pairs), header (Cookie:), json, cookiejar (Netscape file)
                           env: NAME=VALUE lines without 'export', for the shell's eval; to
                           hand them to child processes: set -a; eval "$(...)"; set +a
                           xoauth2, oauthbearer: the SASL string, base64, for --user U
                           (default: the account's identity); oauthbearer also names --host H
                           and --port P when given
        --json             the same as --format json (not with another --format)
      """,
    "logout": """
      Deletes every stored item of ACCOUNT (or of all accounts). The grant at the provider stays.
        --all      every account
      """,
    "agent": """
      The resident agent keeps access tokens in memory and turns many concurrent callers into one
      refresh. 'tokenbroker' starts it on first use when [broker] agent = auto.
        run      serve in the foreground (systemd: tokenbroker.socket + tokenbroker.service)
        start    start it in the background; prints TOKENBROKER_AGENT_SOCKET=...; for eval
        stop     ask it to exit once its open requests are answered
        status   exit 0 when an agent runs, 1 when not
        --json   start, status: print what they report as one JSON object
      It exits after agent-idle-timeout seconds (default 3600) without requests, but not while
      it holds the key of store = encrypted-file (see 'tokenbroker unlock --help').
      """,
    "revoke": """
      Revokes the grant at the provider where it has a revocation endpoint (Google, oidc servers
      that name one; RFC 7009), then deletes every stored item of ACCOUNT. Azure has none: it signs
      out locally, exit 0. If the revocation fails (network, 5xx) it still signs out locally and
      exits 4: remove the grant by hand (Google: https://myaccount.google.com/permissions).
      """,
    "status": """
      Says what is off, never a secret and refreshing nothing: whether the agent runs, the store
      (available, locked or unreachable), and per account (default: every account) its identity,
      tenant, when its refresh token was obtained and the access tokens held (scopes, time left).
        --url URL  which rule and account serve URL (its path selects [host HOST/PATH] groups),
                   the token 'get' would hand out (expiry only), and git's credential helpers
                   for URL, with a warning for each other one that answers before tokenbroker
                   or keeps its tokens
        --json     one JSON object (its keys: man tokenbroker)
      Exit 0, or 3 when the named account (or the URL's) is not signed in.
      """,
    "accounts": """
      Lists each configured account: provider, signed in or not, identity, access-token expiry.
        --json     one JSON array
        --names    only the account names, one per line, without opening the keyring
      """,
    "setup-git": """
      For each host of ACCOUNT (default: of every account), sets credential.https://HOST.helper in
      the global git config to an empty value (which resets helpers from other config files) and
      then 'tokenbroker'. Hosts already set up are left alone. *.suffix patterns are skipped:
      git matches credential URLs by exact host.
        --dry-run  print the git config commands instead of running them
      """,
    "account": """
      Edits the user config file (or the --config file) line by line: only the group edited
      changes; every other line, comment and blank line stays as it was.
      add NAME --provider azure|google|sharepoint|oidc [--KEY VALUE]...
                   adds [account NAME] with the given keys (client-id, tenant, scopes, hosts,
                   ... see tokenbroker-config(5)) at the end of the file
        --replace  for an existing account: set the keys given, in their places, and keep the
                   others (--provider may be left out; another provider needs 'remove' first)
      remove NAME  deletes [account NAME] and the comment lines directly above it; its tokens
                   stay until 'tokenbroker logout NAME'
      The resulting config is checked first: a bad key or value exits 64 naming the option,
      and the file is not changed.
      """,
    "mail": """
      Prints a complete configuration for a mail client that gets its access tokens from
      'tokenbroker token get ACCOUNT --for imap|smtp' (Exchange Online, Gmail, or any server
      taking SASL XOAUTH2 or OAUTHBEARER). CLIENT: msmtp, mbsync (needs Debian's
      libsasl2-modules-kdexoauth2), neomutt, curl. Writes nothing; the user is the signed-in
      identity unless given.
        --user U              the mailbox's address
        --imap HOST[:PORT]    the IMAP server (default: the provider's; 993 with TLS)
        --smtp HOST[:PORT]    the SMTP server (default: the provider's; 587 with STARTTLS)
      """,
    "version": """
      Prints the versions of tokenbroker, libcurl and libsecret.
        --json     one JSON object
      """,
    "unlock": """
      For [broker] store = encrypted-file: reads the passphrase and hands the key derived from it
      (Argon2id) to the agent, which keeps it for unlock-timeout seconds (default 28800; 0: until
      it exits). Without a store yet, creates one: on a terminal after asking the new passphrase
      twice, from --passphrase-fd only with --create; a new passphrase has at least 8
      characters. A wrong passphrase exits 5 and changes
      nothing; so does a store whose Argon2id memory does not fit this process's limits. The
      passphrase is never read from arguments or the environment.
        --passphrase-fd N  read the passphrase as one line from file descriptor N (scripts,
                           systemd) instead of the terminal
        --create           create the store when there is none (needed with --passphrase-fd;
                           an existing store is unlocked as it is)
      """,
    "lock": "For store = encrypted-file: the agent forgets the store's key and its cached access tokens now.",
    "forward": """
      Starts the agent when none runs and prints its forwarding socket, the ssh option and the
      ssh_config RemoteForward line that forward it (the far end's socket is
      /tmp/tokenbroker-USER-forward.sock, USER the remote user), one per line. On the far side
      (an SSH host, a container with the socket mounted), set TOKENBROKER_AGENT_SOCKET to that
      socket: 'token get', exec-credential and the git and docker helpers are answered by this
      agent from its own config and store, for accounts with 'forward = yes' only; everything
      else is refused there. No refresh token crosses it.
        --json     one JSON object: socket, ssh_option, remote_forward, remote_socket
      """,
    "exec": """
      Runs COMMAND with local credential endpoints that the Azure and Google SDKs' default chains
      use, backed by the accounts named (one azure or sharepoint account, whose 'via' serves, and
      one google account), alive as long as COMMAND runs, on 127.0.0.1 for your own processes only.
        azure:  IDENTITY_ENDPOINT and IDENTITY_HEADER (App Service managed identity, 2019-08-01)
        google: GCE_METADATA_HOST, GCE_METADATA_IP, GCE_METADATA_ROOT (the Compute Engine metadata
                server), and GOOGLE_CLOUD_PROJECT when the account has 'project'
      AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, AZURE_CLIENT_CERTIFICATE_PATH, AZURE_FEDERATED_TOKEN_FILE,
      GOOGLE_APPLICATION_CREDENTIALS, MSI_ENDPOINT, MSI_SECRET, IDENTITY_SERVER_THUMBPRINT and
      IMDS_ENDPOINT are removed from COMMAND's environment. Tokens are the signed-in user's, as
      'token get' hands them out (through the agent when it runs). SIGINT, SIGTERM and SIGHUP are
      passed on; the exit status is COMMAND's (128 + N after signal N; 127 when it is not found,
      126 when it cannot be run).
      """,
    "get": """
      The git credential helper: git runs these actions and writes the request on stdin. Let
      'tokenbroker setup-git' configure it for the hosts your accounts serve (it sets
      credential.https://HOST.helper, leaving other hosts to your other helpers). 'get' prints a
      username and an access token for hosts an account serves, and nothing for other hosts. To
      print a token yourself, run 'tokenbroker token get ACCOUNT'.
      """,
  ]

  /// The command lines of the top help, from each declaration's listing (aligned at column 41).
  private static var commandLines: String {
    CommandTable.all.flatMap(\.listing).map { line in
      let pad = String(repeating: " ", count: max(2, 39 - line.synopsis.count))
      return "  " + line.synopsis + pad + line.summary + "\n"
    }.joined()
  }

  /// The usage line of `command` (its declaration's), or the top usage for an unknown one.
  static func usage(_ command: String) -> String { CommandTable.command(command)?.usage ?? topUsage }

  /// ` (did you mean 'X'?)` for a command name close to `name` (NameSuggestion), else "".
  static func suggestion(for name: String) -> String {
    NameSuggestion.closest(to: name, among: CommandTable.all.map(\.name).sorted()).map { " (did you mean '\($0)'?)" } ?? ""
  }

  /// The `--help` text of `command`, or nil for an unknown command.
  static func command(_ command: String, _ args: [String]) -> String? {
    guard let topic = CommandTable.command(command)?.helpTopic, let declaration = CommandTable.command(topic) else { return nil }
    return declaration.usage + "\n\n" + (details[topic] ?? "") + "\n"
  }
}
