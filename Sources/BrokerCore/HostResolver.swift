/// The account (and its scopes and username) that serves one host.
public struct HostMatch: Sendable, Equatable {
  public var account: AccountConfig
  /// The host group's scopes, else the account's.
  public var scopes: [String]
  /// The host group's username, else the account's `git-username`; nil means "the signed-in identity".
  public var username: String?
  /// Which rule matched, for `--verbose`: `[host H]`, `hosts = H of [account A]`, or the pattern.
  public var rule: String = ""
  /// The host group's `registry`, else `RegistryKind.defaultKind(host:)` of the requested host.
  public var registry: RegistryKind? = nil
}

/// Host resolution for the git and docker helpers (interface.md §2.1): a `[host HOST/PATH]` group
/// whose PATH is a prefix of the request's path in whole segments (the longest wins; only for a
/// request with a path), then a `[host HOST]` group, then an account's exact `hosts` entry, then
/// the longest matching `*.suffix` pattern (whole labels). Hosts compare case-insensitively and
/// include the port; path segments compare case-insensitively on Azure DevOps hosts
/// (`dev.azure.com`, `*.visualstudio.com`: organisation names are), exactly elsewhere.
public struct HostResolver: Sendable {
  private let config: BrokerConfig
  private var groups: [String: HostConfig] = [:]
  /// Path groups by host, each with its path's segments as compared.
  private var pathGroups: [String: [(segments: [String], group: HostConfig)]] = [:]
  private var exact: [String: String] = [:]
  private var patterns: [String: String] = [:]  // suffix (with port) -> account

  /// - Throws: `ConfigError.hostConflict` when two groups or accounts claim the same host, path or
  ///   pattern (paths compared as `resolve` compares them).
  public init(config: BrokerConfig) throws {
    self.config = config
    for h in config.hosts {
      if let path = h.path {
        let segments = HostResolver.segments(path, host: h.host)
        if let other = pathGroups[h.host, default: []].first(where: { $0.segments == segments }) {
          throw ConfigError.hostConflict(host: h.name, first: "[host \(other.group.name)]", second: "[host \(h.name)]")
        }
        pathGroups[h.host, default: []].append((segments, h))
        continue
      }
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

  /// The match for `host` (`name[:port]` as git sends it) and `path` (git's `path`: the URL's path
  /// without its leading `/`, percent-decoded; nil when git sent none), or nil when no account
  /// serves it.
  public func resolve(host: String, path: String? = nil) -> HostMatch? {
    let h = host.lowercased()
    guard let (match, group) = match(host: h, path: path) else { return nil }
    var m = match
    m.registry = group?.registry ?? RegistryKind.defaultKind(host: h)
    // An ACR exchange takes a token for the registry's resource, not the account's scopes.
    if m.registry == .acr && group?.scopes == nil { m.scopes = [RegistryKind.acrScope] }
    return m
  }

  /// The rule that serves `h`, and its host group when a group matched.
  private func match(host h: String, path: String?) -> (HostMatch, HostConfig?)? {
    if let path, let g = longestPathGroup(host: h, path: path), let a = config.account(named: g.account) {
      return (HostMatch(account: a, scopes: g.scopes ?? a.scopes, username: g.username ?? a.gitUsername, rule: "[host \(g.name)]"), g)
    }
    if let g = groups[h], let a = config.account(named: g.account) {
      return (HostMatch(account: a, scopes: g.scopes ?? a.scopes, username: g.username ?? a.gitUsername, rule: "[host \(g.host)]"), g)
    }
    if let name = exact[h], let a = config.account(named: name) {
      return (HostMatch(account: a, scopes: a.scopes, username: a.gitUsername, rule: "hosts = \(h) of [account \(name)]"), nil)
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
      return (HostMatch(
        account: a, scopes: a.scopes, username: a.gitUsername, rule: "hosts = *.\(best.2) of [account \(best.1)]"), nil)
    }
    return nil
  }

  /// Every account a request for `host` may have been served by, whatever its path: the accounts
  /// of the host's path groups, then the one of `resolve(host:)` (git `erase` without `path` of a
  /// token handed out for a path). Without repeats.
  public func accounts(servingHost host: String) -> [AccountConfig] {
    let h = host.lowercased()
    var names: [String] = pathGroups[h, default: []].map(\.group.account)
    if let m = resolve(host: h) { names.append(m.account.name) }
    var seen = Set<String>()
    return names.filter { seen.insert($0).inserted }.compactMap { config.account(named: $0) }
  }

  /// Whether `host` has `[host HOST/PATH]` groups (git must then send `path`: `setup-git` sets
  /// `credential.https://HOST.useHttpPath`).
  public func hasPathGroups(host: String) -> Bool { !(pathGroups[host.lowercased()] ?? []).isEmpty }

  /// Whether path segments on `host` compare case-insensitively: Azure DevOps organisation,
  /// project and repository names are (`dev.azure.com`, `*.visualstudio.com`).
  public static func pathsIgnoreCase(host: String) -> Bool { isAzureDevOps(host: host) }

  /// Whether `host` (`HOST[:PORT]`, any case) is Azure DevOps: `dev.azure.com` or
  /// `*.visualstudio.com`.
  public static func isAzureDevOps(host: String) -> Bool {
    let name = splitPort(host.lowercased()).0
    return name == "dev.azure.com" || name.hasSuffix(".visualstudio.com")
  }

  private func longestPathGroup(host: String, path: String) -> HostConfig? {
    guard let candidates = pathGroups[host], !candidates.isEmpty else { return nil }
    let request = HostResolver.segments(path, host: host)
    var best: (Int, HostConfig)?
    for (segments, group) in candidates where request.starts(with: segments) {
      if best == nil || segments.count > best!.0 { best = (segments.count, group) }
    }
    return best?.1
  }

  /// The non-empty segments of `path`, lower-cased where `pathsIgnoreCase(host:)`.
  static func segments(_ path: String, host: String) -> [String] {
    let folded = pathsIgnoreCase(host: host) ? path.lowercased() : path
    return folded.split(separator: "/").map(String.init)
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
