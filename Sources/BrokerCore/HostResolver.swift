/// The account (and its scopes and username) that serves one host.
public struct HostMatch: Sendable, Equatable {
  public var account: AccountConfig
  /// The host group's scopes, else the account's.
  public var scopes: [String]
  /// The host group's username, else the account's `git-username`; nil means "the signed-in identity".
  public var username: String?
  /// Which rule matched, for `--verbose`: `[host H]`, `hosts = H of [account A]`, or the pattern.
  public var rule: String = ""
}

/// Host resolution for the git and docker helpers (interface.md §2.1): a `[host HOST]` group, then an
/// account's exact `hosts` entry, then the longest matching `*.suffix` pattern (whole labels). Hosts
/// compare case-insensitively and include the port.
public struct HostResolver: Sendable {
  private let config: BrokerConfig
  private var groups: [String: HostConfig] = [:]
  private var exact: [String: String] = [:]
  private var patterns: [String: String] = [:]  // suffix (with port) -> account

  /// - Throws: `ConfigError.hostConflict` when two groups or accounts claim the same host or pattern.
  public init(config: BrokerConfig) throws {
    self.config = config
    for h in config.hosts {
      if let other = groups[h.host] {
        throw ConfigError.hostConflict(host: h.host, first: "[host \(other.host)]", second: "[host \(h.host)]")
      }
      groups[h.host] = h
    }
    for a in config.accounts {
      for entry in a.hosts {
        if entry.hasPrefix("*.") {
          let suffix = String(entry.dropFirst(2))
          if let other = patterns[suffix], other != a.name {
            throw ConfigError.hostConflict(host: entry, first: "[account \(other)]", second: "[account \(a.name)]")
          }
          patterns[suffix] = a.name
        } else {
          if let other = exact[entry], other != a.name {
            throw ConfigError.hostConflict(host: entry, first: "[account \(other)]", second: "[account \(a.name)]")
          }
          exact[entry] = a.name
        }
      }
    }
  }

  /// The match for `host` (`name[:port]` as git sends it), or nil when no account serves it.
  public func resolve(host: String) -> HostMatch? {
    let h = host.lowercased()
    if let g = groups[h], let a = config.account(named: g.account) {
      return HostMatch(account: a, scopes: g.scopes ?? a.scopes, username: g.username ?? a.gitUsername, rule: "[host \(g.host)]")
    }
    if let name = exact[h], let a = config.account(named: name) {
      return HostMatch(account: a, scopes: a.scopes, username: a.gitUsername, rule: "hosts = \(h) of [account \(name)]")
    }
    // Longest `*.suffix` whose suffix matches whole labels: `*.example.com` matches
    // `a.example.com` and `b.a.example.com`, not `example.com` or `badexample.com`.
    let (name, port) = HostResolver.splitPort(h)
    var best: (Int, String, String)?
    for (pattern, account) in patterns {
      let (pName, pPort) = HostResolver.splitPort(pattern)
      guard pPort == port, name.hasSuffix("." + pName) else { continue }
      if best == nil || pName.count > best!.0 { best = (pName.count, account, pattern) }
    }
    if let best, let a = config.account(named: best.1) {
      return HostMatch(
        account: a, scopes: a.scopes, username: a.gitUsername, rule: "hosts = *.\(best.2) of [account \(best.1)]")
    }
    return nil
  }

  /// Every configured exact host with its username (for docker `list`).
  public var configuredHosts: [(host: String, match: HostMatch)] {
    var out: [(String, HostMatch)] = []
    for h in groups.keys.sorted() { if let m = resolve(host: h) { out.append((h, m)) } }
    for h in exact.keys.sorted() where groups[h] == nil { if let m = resolve(host: h) { out.append((h, m)) } }
    return out
  }

  static func splitPort(_ host: String) -> (String, String?) {
    if host.hasPrefix("[") { return (host, nil) }
    guard let colon = host.lastIndex(of: ":") else { return (host, nil) }
    return (String(host[..<colon]), String(host[host.index(after: colon)...]))
  }
}
