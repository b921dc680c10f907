/// Usage lines and `--help` texts (stdout, exit 0).
enum Help {
  static let topUsage = "usage: tokenbroker [--config FILE] [--verbose] COMMAND [ARGS]"

  static let top = """
    \(topUsage)

    Keeps OAuth refresh tokens for Azure AD (Entra ID) accounts in the Secret Service keyring and
    hands fresh access tokens to scripts and to git.

    commands:
      login ACCOUNT [--device-code]        sign in interactively and store the refresh token
      token get ACCOUNT [options]          print a valid access token (refreshes silently)
      accounts [--json]                    list accounts and whether they are signed in
      logout ACCOUNT | --all               delete the account's tokens from the store
      revoke ACCOUNT                       revoke at the provider where possible, then log out
      get | store | erase | capability     git credential helper actions (credential.helper = tokenbroker)
      version                              versions of tokenbroker, libcurl and libsecret

    options:
      --config FILE   read only this config file (default: /etc/tokenbroker/config, then
                      ~/.config/tokenbroker/config; also TOKENBROKER_CONFIG)
      --verbose       explain what happens (never prints a secret)

    Run 'tokenbroker COMMAND --help' for a command's options.

    """

  private static let usages: [String: String] = [
    "login": "usage: tokenbroker login ACCOUNT [--device-code | --browser] [--no-open] [--login-hint H]",
    "token": "usage: tokenbroker token get ACCOUNT [--scope S]... [--min-valid SECONDS] [--force-refresh] [--format token|header|json|env|exec-credential]",
    "logout": "usage: tokenbroker logout ACCOUNT | --all",
    "revoke": "usage: tokenbroker revoke ACCOUNT",
    "accounts": "usage: tokenbroker accounts [--json]",
    "version": "usage: tokenbroker version [--json]",
    "get": "usage: tokenbroker get | store | erase | capability   (reads a git credential request on stdin)",
  ]

  private static let details: [String: String] = [
    "login": """
      Signs in to ACCOUNT with the device code flow: prints a URL and a code on stderr, waits
      (up to login-timeout) for you to enter it, stores the refresh token in the keyring and
      drops the account's cached access tokens. A second login of the same account while one
      is running exits 7.
      """,
    "token": """
      Prints a valid access token for ACCOUNT, refreshing it silently when less than
      refresh-margin (or --min-valid) seconds are left. Never interactive: exits 3 when you
      need to run 'tokenbroker login ACCOUNT'.
        --scope S          request these scopes instead of the account's (repeatable)
        --min-valid N      the token must stay valid at least N more seconds
        --force-refresh    refresh even if the cached token is still valid
        --format F         token (default), header, json, env, exec-credential
      """,
    "logout": "Deletes every stored item of ACCOUNT (or of all accounts). The grant at the provider stays.",
    "revoke": "Revokes the grant at the provider where it has an endpoint, then logs out locally.",
    "accounts": "Lists each configured account: provider, signed in or not, identity, access-token expiry.",
    "version": "Prints the versions of tokenbroker, libcurl and libsecret.",
    "get": """
      The git credential helper. Configure git with 'git config --global credential.helper tokenbroker'
      (or per host: credential.https://HOST.helper). 'get' prints a username and an access token
      for hosts an account serves, and nothing for other hosts.
      """,
  ]

  static func usage(_ command: String) -> String { usages[command] ?? topUsage }

  /// The `--help` text of `command`, or nil for an unknown command.
  static func command(_ command: String, _ args: [String]) -> String? {
    let key = ["store", "erase", "capability"].contains(command) ? "get" : command
    guard let usage = usages[key] else { return nil }
    return usage + "\n\n" + (details[key] ?? "") + "\n"
  }
}
