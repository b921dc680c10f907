/// Turns `RawConfig` into a validated `BrokerConfig` (interface.md §2.1).
///
/// Unknown groups and keys become warnings; a bad value or a missing required key throws
/// `ConfigError.invalid` naming file, group and key.
public enum ConfigParser {
  private static let brokerKeys: Set<String> = [
    "store", "unlock-timeout", "agent", "agent-idle-timeout", "refresh-margin", "ca-file", "browser", "login-timeout",
    "notify", "reauth-cooldown",
  ]
  private static let accountKeys: Set<String> = [
    "provider", "issuer", "client-id", "client-secret", "client-auth", "device-client-id", "device-client-secret", "tenant", "scopes",
    "hosts", "git-username", "flow", "login-hint", "redirect-port", "authority", "authorization-endpoint",
    "token-endpoint", "device-authorization-endpoint", "revocation-endpoint", "userinfo-endpoint", "ca-file",
    "site", "via", "mode", "cookie-lifetime", "project", "kube-token",
    "project-number", "resource-manager-endpoint", "forward", "mail", "mail-scopes", "api-endpoint",
  ]
  private static let hostKeys: Set<String> = ["account", "scopes", "username", "registry"]

  public static func parse(_ raw: RawConfig) throws -> BrokerConfig {
    var config = BrokerConfig()
    for group in raw.groups {
      if group.name == "broker" {
        try parseBroker(group, into: &config)
      } else if let name = suffix(group.name, after: "account ") {
        config.accounts.append(try parseAccount(name, group, warnings: &config.warnings))
      } else if let host = suffix(group.name, after: "host ") {
        config.hosts.append(try parseHost(host, group, warnings: &config.warnings))
      } else {
        config.warnings.append("\(group.file): [\(group.name)]: unknown group, ignored")
      }
    }
    try validateReferences(config, raw)
    _ = try HostResolver(config: config)  // conflicts are configuration errors
    return config
  }

  private static func suffix(_ s: String, after prefix: String) -> String? {
    guard s.hasPrefix(prefix) else { return nil }
    let rest = String(s.dropFirst(prefix.count)).trimmingSpaces()
    return rest.isEmpty ? nil : rest
  }

  private static func parseBroker(_ g: RawConfig.Group, into config: inout BrokerConfig) throws {
    var s = BrokerSettings()
    for e in g.entries {
      let v = e.value
      switch e.key {
      case "store": s.store = try choice(StoreKind(rawValue: v), e, g, "secret-service, encrypted-file or file")
      case "unlock-timeout": s.unlockTimeout = try seconds(e, g)
      case "agent": s.agent = try choice(AgentMode(rawValue: v), e, g, "auto or off")
      case "agent-idle-timeout": s.agentIdleTimeout = try seconds(e, g)
      case "refresh-margin": s.refreshMargin = try seconds(e, g)
      case "login-timeout": s.loginTimeout = try seconds(e, g, minimum: 1)
      case "ca-file": s.caFile = try path(e, g)
      case "browser": s.browser = try nonEmpty(e, g)
      case "notify": s.notify = try choice(NotifyMode(rawValue: v), e, g, "auto or off")
      case "reauth-cooldown": s.reauthCooldown = try seconds(e, g)
      default: config.warnings.append(unknownKey(e, g))
      }
    }
    // Only the agent holds the encrypted store's key and touches its file (interface.md §7.1).
    if s.store == .encryptedFile && s.agent == .off, let e = g.entries.first(where: { $0.key == "store" }) {
      throw bad(e, g, "encrypted-file needs the agent (its key is held only there); set agent = auto")
    }
    config.settings = s
  }

  private static func parseAccount(_ name: String, _ g: RawConfig.Group, warnings: inout [String]) throws
    -> AccountConfig
  {
    guard let providerEntry = g.entries.first(where: { $0.key == "provider" }) else {
      throw missing("provider", g, "azure, google, sharepoint, oidc or github")
    }
    let provider = try choice(
      ProviderKind(rawValue: providerEntry.value), providerEntry, g, "azure, google, sharepoint, oidc or github")
    var a = AccountConfig(name: name, provider: provider)
    for e in g.entries {
      switch e.key {
      case "provider": break
      case "client-id": a.clientID = try nonEmpty(e, g)
      case "client-secret": a.clientSecret = Secret(try nonEmpty(e, g))
      case "device-client-id": a.deviceClientID = try nonEmpty(e, g)
      case "client-auth":
        a.clientAuth = try choice(
          ClientAuthMethod(rawValue: e.value), e, g, "client_secret_basic, client_secret_post or none")
      case "device-client-secret": a.deviceClientSecret = Secret(e.value)  // empty: a public device client
      case "tenant": a.tenant = try token(e, g)
      case "scopes": a.scopes = ScopeSet.split(e.value)
      case "hosts":
        a.hosts = try ScopeSet.split(e.value).map { entry in
          if entry.contains("/") {
            throw bad(e, g, "'\(entry)' has a path; bind a path with a [host \(entry)] group (account = \(name)) instead")
          }
          return try hostPattern(entry, e, g)
        }
      case "git-username": a.gitUsername = try nonEmpty(e, g)
      case "flow": a.flow = try choice(LoginFlow(rawValue: e.value), e, g, "browser or device-code")
      case "login-hint": a.loginHint = try nonEmpty(e, g)
      case "redirect-port": a.redirectPort = try integer(e, g, in: 1...65535)
      case "authority": a.authority = try endpoint(e, g, allowPath: false)
      case "issuer":
        a.issuer = try endpoint(e, g)
        if e.value.contains("?") || e.value.contains("#") { throw bad(e, g, "'\(e.value)' must have no query or fragment") }
      case "authorization-endpoint": a.endpoints.authorization = try endpoint(e, g)
      case "token-endpoint": a.endpoints.token = try endpoint(e, g)
      case "device-authorization-endpoint": a.endpoints.deviceAuthorization = try endpoint(e, g)
      case "revocation-endpoint": a.endpoints.revocation = try endpoint(e, g)
      case "userinfo-endpoint": a.endpoints.userinfo = try endpoint(e, g)
      case "api-endpoint":
        var base = try endpoint(e, g)
        while base.hasSuffix("/") { base.removeLast() }
        a.apiEndpoint = base
      case "ca-file": a.caFile = try path(e, g)
      case "site": a.site = try endpoint(e, g, allowPath: false)
      case "via": a.via = try token(e, g)
      case "mode": a.mode = try choice(SharePointMode(rawValue: e.value), e, g, "bearer, cookie or imported-cookies")
      case "cookie-lifetime": a.cookieLifetime = try seconds(e, g, minimum: 1)
      case "project": a.project = try token(e, g)
      case "project-number":
        guard !e.value.isEmpty, e.value.utf8.count <= 19, e.value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
          throw bad(e, g, "'\(e.value)' is not a project number (digits, as the console's project info shows)")
        }
        a.projectNumber = e.value
      case "resource-manager-endpoint":
        var origin = try endpoint(e, g)
        while origin.hasSuffix("/") { origin.removeLast() }
        a.resourceManagerEndpoint = origin
      case "kube-token":
        a.kubeToken = try choice(KubeToken(rawValue: e.value), e, g, "access or id")
        if a.kubeToken == .id && provider != .oidc {
          throw bad(e, g, "'id' is for oidc accounts (\(provider.rawValue) accounts hand kubectl their access token)")
        }
      case "forward":
        a.forward = try choice(["yes": true, "no": false][e.value], e, g, "yes or no")
      case "mail":
        a.mail = try ScopeSet.split(e.value).map { word in
          guard let p = MailProtocol(rawValue: word) else { throw bad(e, g, "'\(word)' is not one of imap, pop or smtp, space separated") }
          return p
        }
        if provider == .sharepoint { throw bad(e, g, "sharepoint accounts have no mail tokens; set mail in their 'via' account") }
      case "mail-scopes": a.mailScopes = ScopeSet.split(e.value)
      default: warnings.append(unknownKey(e, g))
      }
    }
    func require(_ present: Bool, _ key: String, _ why: String) throws {
      if !present { throw missing(key, g, why) }
    }
    switch provider {
    case .azure: try require(a.clientID != nil, "client-id", "the application (client) ID of your app registration")
    case .google:
      try require(a.clientID != nil, "client-id", "the OAuth client ID of your Google Cloud project")
      try require(a.clientSecret != nil, "client-secret", "the Desktop app client secret")
    case .oidc:
      try require(a.issuer != nil, "issuer", "the OpenID Provider's issuer URL, e.g. https://login.example.com/realms/main")
      try require(a.clientID != nil, "client-id", "the client ID registered at the provider")
    case .sharepoint:
      try require(a.site != nil, "site", "the site origin, e.g. https://contoso.sharepoint.com")
      if a.mode != .importedCookies { try require(a.via != nil, "via", "the azure account that signs in") }
    case .github:
      try require(a.clientID != nil, "client-id", "the client ID of your GitHub OAuth app or GitHub App")
      forgeDefaults(&a, hostsSet: g.entries.contains { $0.key == "hosts" })
    }
    return a
  }

  /// A forge's presets (interface.md §2.2): `hosts` defaults to the authority's host (and
  /// `gist.github.com` for github.com), a claim like any other (`hosts =`, empty, claims none);
  /// git's username is the preset's unless `git-username` names one.
  private static func forgeDefaults(_ a: inout AccountConfig, hostsSet: Bool) {
    if !hostsSet, let host = EndpointURL(a.authority)?.authority.lowercased() {
      a.hosts = host == "github.com" ? [host, "gist.github.com"] : [host]
    }
    if a.gitUsername == nil { a.gitUsername = "x-access-token" }
  }

  private static func parseHost(_ name: String, _ g: RawConfig.Group, warnings: inout [String]) throws -> HostConfig {
    let header = RawConfig.Entry(key: "", value: name, file: g.file)
    let slash = name.firstIndex(of: "/")
    let host = slash.map { String(name[..<$0]) } ?? name
    let key = try hostPattern(host, header, g, allowWildcard: false)
    var h = HostConfig(host: key, path: try slash.map { try hostPath(String(name[$0...]), g) }, account: "")
    for e in g.entries {
      switch e.key {
      case "account": h.account = try token(e, g)
      case "scopes": h.scopes = ScopeSet.split(e.value)
      case "username": h.username = try nonEmpty(e, g)
      case "registry": h.registry = try choice(RegistryKind(rawValue: e.value), e, g, "acr")
      default: warnings.append(unknownKey(e, g))
      }
    }
    if h.account.isEmpty { throw missing("account", g, "the account that serves this host") }
    return h
  }

  /// The PATH of `[host HOST/PATH]` without its leading and trailing `/`: one or more segments,
  /// none empty, `.` or `..`, without white space, control characters, `?`, `#` or `%` (git hands
  /// helpers the path percent-decoded, so it is written decoded here).
  private static func hostPath(_ raw: String, _ g: RawConfig.Group) throws -> String {
    var path = Substring(raw)
    while path.first == "/" { path.removeFirst() }
    while path.last == "/" { path.removeLast() }
    let segments = path.split(separator: "/", omittingEmptySubsequences: false)
    let bad = path.isEmpty
      || segments.contains { $0.isEmpty || $0 == "." || $0 == ".." }
      || path.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || "?#%\\".unicodeScalars.contains($0) }
    if bad {
      throw ConfigError.invalid(
        file: g.file, group: g.name, key: nil,
        problem: "'\(raw)' is not a path prefix (segments separated by '/', e.g. [host dev.azure.com/contoso])")
    }
    return String(path)
  }

  private static func validateReferences(_ c: BrokerConfig, _ raw: RawConfig) throws {
    var seen = Set<String>()
    for a in c.accounts {
      if !seen.insert(a.name).inserted {
        throw ConfigError.invalid(file: "config", group: "account \(a.name)", key: nil, problem: "defined twice")
      }
    }
    for h in c.hosts where c.account(named: h.account) == nil {
      let file = raw.groups.first { $0.name == "host \(h.name)" }?.file ?? "config"
      throw ConfigError.invalid(file: file, group: "host \(h.name)", key: "account", problem: "no account '\(h.account)' is defined")
    }
    for h in c.hosts where h.registry == .acr {
      guard let a = c.account(named: h.account), a.provider != .azure else { continue }
      let file = raw.groups.first { $0.name == "host \(h.name)" }?.file ?? "config"
      throw ConfigError.invalid(
        file: file, group: "host \(h.name)", key: "registry",
        problem: "'acr' needs an azure account (its Entra token is what the registry exchanges); '\(a.name)' is \(a.provider.rawValue)")
    }
    for a in c.accounts where a.provider == .sharepoint {
      guard let via = a.via else { continue }
      let file = raw.groups.first { $0.name == "account \(a.name)" }?.file ?? "config"
      guard let target = c.account(named: via), target.provider == .azure else {
        throw ConfigError.invalid(file: file, group: "account \(a.name)", key: "via", problem: "'\(via)' is not an azure account")
      }
    }
  }

  // MARK: value checks

  private static func unknownKey(_ e: RawConfig.Entry, _ g: RawConfig.Group) -> String {
    NameSuggestion.appending(
      to: "\(e.file): [\(g.name)] \(e.key): unknown key, ignored", for: e.key, among: ConfigKeys.known(inGroup: g.name))
  }
  /// A required key's absence, naming a key of the group that looks like a misspelling of it.
  private static func missing(_ key: String, _ g: RawConfig.Group, _ why: String) -> ConfigError {
    let known = ConfigKeys.known(inGroup: g.name)
    let lookalike = g.entries.first { !known.contains($0.key) && NameSuggestion.closest(to: $0.key, among: [key]) != nil }
    let problem = lookalike.map { "missing; the group has '\($0.key)': write it as '\(key)'" } ?? "missing (\(why))"
    return ConfigError.invalid(file: g.file, group: g.name, key: key, problem: problem)
  }
  private static func bad(_ e: RawConfig.Entry, _ g: RawConfig.Group, _ problem: String) -> ConfigError {
    .invalid(file: e.file, group: g.name, key: e.key, problem: problem)
  }
  private static func choice<T>(_ value: T?, _ e: RawConfig.Entry, _ g: RawConfig.Group, _ allowed: String) throws -> T {
    guard let value else { throw bad(e, g, "'\(e.value)' is not one of \(allowed)") }
    return value
  }
  private static func nonEmpty(_ e: RawConfig.Entry, _ g: RawConfig.Group) throws -> String {
    guard !e.value.isEmpty else { throw bad(e, g, "empty value") }
    return e.value
  }
  private static func token(_ e: RawConfig.Entry, _ g: RawConfig.Group) throws -> String {
    let v = try nonEmpty(e, g)
    guard !v.contains(where: { $0 == " " || $0 == "\t" || $0 == "/" }) else { throw bad(e, g, "'\(v)' must be one word") }
    return v
  }
  private static func integer(_ e: RawConfig.Entry, _ g: RawConfig.Group, in range: ClosedRange<Int>) throws -> Int {
    guard let n = Int(e.value), range.contains(n) else {
      throw bad(e, g, "'\(e.value)' is not a whole number from \(range.lowerBound) to \(range.upperBound)")
    }
    return n
  }
  private static func seconds(_ e: RawConfig.Entry, _ g: RawConfig.Group, minimum: Int = 0) throws -> Int {
    try integer(e, g, in: minimum...315_360_000)
  }
  private static func path(_ e: RawConfig.Entry, _ g: RawConfig.Group) throws -> String {
    let v = try nonEmpty(e, g)
    guard v.hasPrefix("/") || v.hasPrefix("~/") else { throw bad(e, g, "'\(v)' must be an absolute path") }
    return v
  }
  private static func endpoint(_ e: RawConfig.Entry, _ g: RawConfig.Group, allowPath: Bool = true) throws -> String {
    let v = try nonEmpty(e, g)
    guard let url = EndpointURL(v) else { throw bad(e, g, "'\(v)' is not an http(s) URL") }
    if url.scheme == "http" && !url.isLoopback {
      throw bad(e, g, "'\(v)' must use https:// (http:// is allowed only for loopback hosts)")
    }
    if !allowPath && !(url.path.isEmpty || url.path == "/") {
      throw bad(e, g, "'\(v)' must be an origin (scheme://host[:port]) without a path")
    }
    return allowPath ? v : (url.scheme + "://" + url.authority)
  }
  static func hostPattern(
    _ v: String, _ e: RawConfig.Entry, _ g: RawConfig.Group, allowWildcard: Bool = true
  ) throws -> String {
    let lower = v.lowercased()
    var name = lower
    if allowWildcard, name.hasPrefix("*.") { name.removeFirst(2) }
    if let colon = name.lastIndex(of: ":") {
      guard let port = Int(name[name.index(after: colon)...]), (1...65535).contains(port) else {
        throw bad(e, g, "'\(v)' has a bad port")
      }
      name = String(name[..<colon])
    }
    let ok = !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
      && !name.hasPrefix(".") && !name.hasSuffix(".")
    guard ok else { throw bad(e, g, "'\(v)' is not a host name" + (allowWildcard ? " or *.suffix pattern" : "")) }
    return lower
  }
}

extension StringProtocol {
  /// The text without leading and trailing spaces, tabs, CRs and LFs (config values, header
  /// values, cookie lines, numbers in replies).
  public func trimmingSpaces() -> String {
    var s = Substring(self)
    while let f = s.first, f == " " || f == "\t" || f == "\r" || f == "\n" { s.removeFirst() }
    while let l = s.last, l == " " || l == "\t" || l == "\r" || l == "\n" { s.removeLast() }
    return String(s)
  }
}
