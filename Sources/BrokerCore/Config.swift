/// The identity providers tokenbroker speaks to.
public enum ProviderKind: String, Sendable, CaseIterable {
  /// Any OpenID Connect provider (or RFC 8414 OAuth 2.0 server), through its discovery document.
  case azure, google, sharepoint, oidc
  /// GitHub and GitHub Enterprise Server (interface.md §2.2): fixed endpoints under `authority`,
  /// no discovery.
  case github
}

/// `[broker] store`.
public enum StoreKind: String, Sendable { case secretService = "secret-service", encryptedFile = "encrypted-file", file }
/// `[broker] agent`.
public enum AgentMode: String, Sendable { case auto, off }
/// `[broker] notify` (interface.md §8.1): a desktop notification when an account needs signing in.
public enum NotifyMode: String, Sendable { case auto, off }
/// `[account] flow`.
public enum LoginFlow: String, Sendable { case browser, deviceCode = "device-code" }
/// `[account] client-auth`: how a client authenticates at the token, device authorization and
/// revocation endpoints (RFC 6749 §2.3.1; RFC 7591 §2 names).
public enum ClientAuthMethod: String, Sendable {
  /// `Authorization: Basic` of the form-encoded id and secret (RFC 6749 §2.3.1).
  case clientSecretBasic = "client_secret_basic"
  /// `client_id` and `client_secret` in the form body (RFC 6749 §2.3.1, NOT RECOMMENDED there).
  case clientSecretPost = "client_secret_post"
  /// A public client: `client_id` in the form body, no secret.
  case none
}
/// `[account] kube-token` of oidc accounts: which token `--format exec-credential` hands kubectl.
public enum KubeToken: String, Sendable {
  /// The access token, with its expiry.
  case access
  /// The OpenID Connect ID token, with its own `exp` (kube-apiserver's OIDC authenticator
  /// validates ID tokens: their `iss`, `aud` and `exp`).
  case id
}
/// `[host] registry`: how the docker helper answers for a container registry (interface.md §2.1, §5).
public enum RegistryKind: String, Sendable {
  /// Azure Container Registry: the account's Entra token exchanged at `https://HOST/oauth2/exchange`
  /// for a registry refresh token.
  case acr

  /// The scope an ACR exchange needs when the host group names none (interface.md §5).
  public static let acrScope = "https://containerregistry.azure.net/.default"

  /// The default for a host without `registry`: `acr` for `*.azurecr.io` (any port), else nil.
  public static func defaultKind(host: String) -> RegistryKind? {
    var name = Substring(host.lowercased())
    if !name.hasPrefix("["), let colon = name.lastIndex(of: ":") { name = name[..<colon] }
    return name.hasSuffix(".azurecr.io") ? .acr : nil
  }
}
/// `[account] mode` of SharePoint accounts.
public enum SharePointMode: String, Sendable { case bearer, cookie, importedCookies = "imported-cookies" }

/// The `[broker]` group (interface.md §2.1). Durations in seconds.
public struct BrokerSettings: Sendable, Equatable {
  public var store: StoreKind = .secretService
  public var agent: AgentMode = .auto
  public var agentIdleTimeout: Int = 3600
  /// How long the agent keeps the encrypted store's key after `unlock`; 0: until it exits.
  public var unlockTimeout: Int = 28800
  /// A token with fewer seconds left than this is refreshed before it is handed out.
  public var refreshMargin: Int = 300
  public var caFile: String?
  public var browser: String?
  public var loginTimeout: Int = 300
  /// interface.md §8.1: one notification when an account needs signing in again, or none.
  public var notify: NotifyMode = .auto
  /// interface.md §8.1: quiet seconds after a dismissed notification or an unfinished flow.
  public var reauthCooldown: Int = 900
  public init() {}

  /// The extra CA bundles for requests of `accounts`: `[broker] ca-file`, then each account's.
  public func caFiles(_ accounts: AccountConfig...) -> [String] {
    [caFile].compactMap { $0 } + accounts.compactMap(\.caFile)
  }
}

/// RFC 8414 endpoint overrides of an account; nil means the provider's default.
public struct EndpointOverrides: Sendable, Equatable {
  public var authorization: String?
  public var token: String?
  public var deviceAuthorization: String?
  public var revocation: String?
  public var userinfo: String?
  public init() {}
}

/// One `[account NAME]` group, validated.
public struct AccountConfig: Sendable, Equatable {
  public var name: String
  public var provider: ProviderKind
  public var clientID: String?
  public var clientSecret: Secret?
  /// nil: chosen as interface.md §2.1 says (none without a secret, else Basic unless the server
  /// lists only `client_secret_post`; Google: `client_secret_post`).
  public var clientAuth: ClientAuthMethod?
  public var deviceClientID: String?
  /// An empty secret means a public device client (no secret sent).
  public var deviceClientSecret: Secret?
  /// Azure tenant: `common`, `organizations`, `consumers`, a GUID or a domain.
  public var tenant: String = "organizations"
  /// The scopes as configured (the provider default when the key is absent).
  public var scopes: [String]
  /// Hosts or `*.suffix` patterns (lower-cased, `:port` kept).
  public var hosts: [String] = []
  public var gitUsername: String?
  /// nil: browser when a display is present, else device code.
  public var flow: LoginFlow?
  public var loginHint: String?
  public var redirectPort: Int?
  /// The authority origin: azure `https://login.microsoftonline.com`, github `https://github.com`
  /// (`AccountConfig.defaultAuthority`).
  public var authority: String
  /// Forges: the REST base for the user endpoint (`api-endpoint`); nil: the forge's
  /// (`GitHubEndpoints`).
  public var apiEndpoint: String?
  /// oidc: the OpenID Provider's issuer identifier, exactly as configured (compared byte for byte
  /// with the discovery document's `issuer`).
  public var issuer: String?
  public var endpoints = EndpointOverrides()
  public var caFile: String?
  public var site: String?
  public var via: String?
  public var mode: SharePointMode = .bearer
  public var cookieLifetime: Int = 43200
  /// google: the Cloud project id `exec`'s metadata endpoint reports (`project`), or nil.
  public var project: String?
  /// google: the project's number, digits (`project-number`), or nil: looked up at
  /// `resourceManagerEndpoint` when exec is asked for it.
  public var projectNumber: String?
  /// google: Cloud Resource Manager's origin (`resource-manager-endpoint`), for the project number.
  public var resourceManagerEndpoint = "https://cloudresourcemanager.googleapis.com"
  /// oidc: the token `--format exec-credential` carries (`kube-token`).
  public var kubeToken: KubeToken = .access
  /// Whether callers on the agent's forwarding socket may get this account's access tokens
  /// (`forward = yes`; interface.md §8).
  public var forward = false
  /// The mail protocols whose consent `login` asks up front and whose scopes one mail token
  /// carries (`mail = imap pop smtp`, any of them; `MailScopes`).
  public var mail: [MailProtocol] = []
  /// oidc: the scopes of a mail token (`mail-scopes`); empty when not set.
  public var mailScopes: [String] = []

  public init(name: String, provider: ProviderKind) {
    self.name = name
    self.provider = provider
    self.scopes = AccountConfig.defaultScopes(provider)
    self.authority = AccountConfig.defaultAuthority(provider)
  }

  /// The `authority` an account has when it sets none (interface.md §2.1, §2.2).
  public static func defaultAuthority(_ provider: ProviderKind) -> String {
    provider == .github ? "https://github.com" : "https://login.microsoftonline.com"
  }

  public static func defaultScopes(_ provider: ProviderKind) -> [String] {
    switch provider {
    case .azure: return ["https://graph.microsoft.com/.default"]
    case .google: return ["openid", "email"]
    case .sharepoint: return []
    case .oidc: return ["openid", "profile", "email", "offline_access"]
    case .github: return ["repo", "gist", "workflow"]
    }
  }
}

/// One `[host HOST]` or `[host HOST/PATH]` group.
public struct HostConfig: Sendable, Equatable {
  /// Lower-cased host with optional `:port`.
  public var host: String
  /// The path prefix of a `[host HOST/PATH]` group, as written, without leading or trailing `/`
  /// (`contoso`, `contoso/project`); nil for a `[host HOST]` group.
  public var path: String?
  public var account: String
  public var scopes: [String]?
  public var username: String?
  /// `registry`; nil: `RegistryKind.defaultKind(host:)`.
  public var registry: RegistryKind?
  public init(
    host: String, path: String? = nil, account: String, scopes: [String]? = nil, username: String? = nil,
    registry: RegistryKind? = nil
  ) {
    self.host = host
    self.path = path
    self.account = account
    self.scopes = scopes
    self.username = username
    self.registry = registry
  }

  /// What follows `host ` in the group's header: `HOST` or `HOST/PATH`.
  public var name: String { path.map { host + "/" + $0 } ?? host }
}

/// The whole validated configuration.
public struct BrokerConfig: Sendable, Equatable {
  public var settings = BrokerSettings()
  /// Accounts in file order.
  public var accounts: [AccountConfig] = []
  public var hosts: [HostConfig] = []
  /// Non-fatal findings (unknown keys), each `file: [group] key: what`.
  public var warnings: [String] = []
  public init() {}

  public func account(named name: String) -> AccountConfig? { accounts.first { $0.name == name } }

  /// The account `name`. - Throws: `ConfigError.unknownAccount`.
  public func requireAccount(_ name: String) throws -> AccountConfig {
    guard let a = account(named: name) else { throw unknownAccount(name) }
    return a
  }

  /// The error for an account name the config does not define, naming a defined one it looks like.
  public func unknownAccount(_ name: String) -> ConfigError {
    .unknownAccount(name, suggestion: NameSuggestion.closest(to: name, among: accounts.map(\.name)))
  }
}

/// Key/value groups as read from the config files, before validation. `file` is the path each
/// value came from (the user file overrides `/etc` key by key).
public struct RawConfig: Sendable, Equatable {
  public struct Entry: Sendable, Equatable {
    public var key: String
    public var value: String
    public var file: String
    public init(key: String, value: String, file: String) {
      self.key = key
      self.value = value
      self.file = file
    }
  }
  public struct Group: Sendable, Equatable {
    public var name: String
    public var file: String
    public var entries: [Entry]
    public init(name: String, file: String, entries: [Entry]) {
      self.name = name
      self.file = file
      self.entries = entries
    }
  }
  public var groups: [Group] = []
  public init(groups: [Group] = []) { self.groups = groups }

  /// Merges `overlay` on top of `self`, key by key (interface.md §2.1).
  public func merged(with overlay: RawConfig) -> RawConfig {
    var result = self
    for g in overlay.groups {
      if let i = result.groups.firstIndex(where: { $0.name == g.name }) {
        for e in g.entries {
          if let j = result.groups[i].entries.firstIndex(where: { $0.key == e.key }) {
            result.groups[i].entries[j] = e
          } else {
            result.groups[i].entries.append(e)
          }
        }
      } else {
        result.groups.append(g)
      }
    }
    return result
  }
}

/// Configuration errors (exit 64). Each names the file, group and key where it applies.
public enum ConfigError: Error, Sendable, Equatable {
  case invalid(file: String, group: String, key: String?, problem: String)
  case unreadable(file: String, detail: String)
  /// `suggestion`: a defined account whose name looks like this one (NameSuggestion).
  case unknownAccount(String, suggestion: String? = nil)
  case hostConflict(host: String, first: String, second: String)
}

extension ConfigError {
  /// `problem` with `key` of `[account NAME]`, found after the files were merged (the key may come
  /// from /etc or the user's file, so the file is named as `config`).
  public static func accountKey(_ account: String, _ key: String, _ problem: String) -> ConfigError {
    .invalid(file: "config", group: "account \(account)", key: key, problem: problem)
  }
}

extension ConfigError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .invalid(let file, let group, let key, let problem):
      return "\(file): [\(group)]\(key.map { " \($0)" } ?? ""): \(problem); fix the config file"
    case .unreadable(let file, let detail): return "cannot read the config file '\(file)' (\(detail)); fix or remove it"
    case .unknownAccount(let name, let suggestion?):
      return "no account '\(name)' in the config; did you mean '\(suggestion)'?"
    case .unknownAccount(let name, nil):
      return "no account '\(name)' in the config; add an [account \(name)] group (see 'tokenbroker account add --help')"
    case .hostConflict(let host, let first, let second) where first.hasPrefix("[account ") && second.hasPrefix("[account ")
      && !host.hasPrefix("*."):
      // Two accounts on one host (a forge's default `hosts` is a claim too, interface.md §2.2):
      // path groups tell them apart, as on Azure DevOps.
      return "host '\(host)' is claimed by both \(first) and \(second); give one of them its own hosts (hosts = claims none) "
        + "and bind each part of the host to its account with a path group ([host \(host)/ORG] with account = NAME)"
    case .hostConflict(let host, let first, let second):
      return "host '\(host)' is claimed by both \(first) and \(second); keep it in one place in the config"
    }
  }
}
