/// The keys each group of the config file takes (interface.md §2.1), for "did you mean" in
/// ConfigParser's warnings and errors. ConfigParser's `switch` statements decide what a key does;
/// ConfigKeysTests checks that every key here parses without an "unknown key" warning.
public enum ConfigKeys {
  public static let broker = [
    "store", "unlock-timeout", "agent", "agent-idle-timeout", "refresh-margin", "login-timeout", "ca-file", "browser",
    "notify", "reauth-cooldown",
  ]
  public static let account = [
    "provider", "client-id", "client-secret", "device-client-id", "client-auth", "device-client-secret", "tenant",
    "scopes", "hosts", "git-username", "flow", "login-hint", "redirect-port", "authority", "issuer",
    "authorization-endpoint", "token-endpoint", "device-authorization-endpoint", "revocation-endpoint",
    "userinfo-endpoint", "ca-file", "site", "via", "mode", "cookie-lifetime", "project", "project-number",
    "resource-manager-endpoint", "kube-token", "forward", "mail", "mail-scopes", "api-endpoint",
  ]
  public static let host = ["account", "scopes", "username", "registry"]

  /// The keys of the group named `group` (`broker`, `account NAME`, `host HOST`); none for others.
  public static func known(inGroup group: String) -> [String] {
    if group == "broker" { return broker }
    if group.hasPrefix("account ") { return account }
    if group.hasPrefix("host ") { return host }
    return []
  }
}
