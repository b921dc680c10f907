import BrokerCore
import BrokerProviders

/// What `status` prints: this is the `--json` document (snake_case keys, Unix seconds; every key
/// present, an absent value as `null`), and `text(now:)` its lines. Holds no token: access tokens
/// appear as scopes and expiry only.
struct StatusReport: Encodable {
  /// An optional that encodes as JSON `null` when absent, where a synthesized `Encodable` would
  /// leave its key out.
  @propertyWrapper struct Null<Value: Encodable>: Encodable {
    var wrappedValue: Value?
    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
    func encode(to encoder: any Encoder) throws {
      var c = encoder.singleValueContainer()
      if let wrappedValue { try c.encode(wrappedValue) } else { try c.encodeNil() }
    }
  }

  struct Agent: Encodable {
    var running: Bool
    @Null var pid: Int32? = nil
    var socket: String

  }
  struct Store: Encodable {
    /// `[broker] store`.
    var kind: String
    /// `available`, `locked`, `missing` (no encrypted store yet) or `unreachable`.
    var state: String
    /// The store's error, when not available.
    @Null var detail: String? = nil

  }
  struct AccessToken: Encodable {
    var scopes: [String]
    var expires_on: Int64
    var seconds_left: Int64
  }
  struct Account: Encodable {
    var name, provider: String
    /// nil when the store could not be read.
    @Null var signed_in: Bool? = nil
    /// interface.md §8.1: `signed-in`, `signed-out`, `sign-in-needed`, `sign-in-pending` or
    /// `cooldown`; nil when the store could not be read.
    @Null var state: String? = nil
    /// Unix seconds since the account has been signed out or needed signing in, where known.
    @Null var state_since: Int64? = nil
    /// Why it needs signing in: `rejected`, `revoked`, `expired` or `never-signed-in`.
    @Null var state_reason: String? = nil
    /// Unix seconds when a `cooldown` ends.
    @Null var state_until: Int64? = nil
    @Null var identity: String? = nil
    @Null var tenant: String? = nil
    @Null var refresh_token_obtained_at: Int64? = nil
    /// Where the provider says (Google's `refresh_token_expires_in`, Keycloak's
    /// `refresh_expires_in`; Entra never does): Unix seconds, else nil.
    @Null var refresh_token_expires_on: Int64? = nil
    var access_tokens: [AccessToken]

    init(_ d: AccountDetails, now: Int64) {
      name = d.account.name
      provider = d.account.provider.rawValue
      signed_in = d.signedIn
      state = d.state.name
      switch d.state {
      case .signedOut(let since): state_since = since
      default:
        state_since = d.state.need?.since
        state_reason = d.state.need?.reason.rawValue
      }
      if case .cooldown(_, let until) = d.state { state_until = until }
      identity = d.identity
      tenant = d.tenant ?? (d.account.provider == .azure ? d.account.tenant : nil)
      refresh_token_obtained_at = d.refreshTokenObtainedAt
      refresh_token_expires_on = d.refreshTokenExpiresOn
      access_tokens = d.accessTokens.map { AccessToken(scopes: $0.scopes, expires_on: $0.expiresOn, seconds_left: max(0, $0.expiresOn - now)) }
    }


    init(unknown account: AccountConfig) {
      name = account.name
      provider = account.provider.rawValue
      tenant = account.provider == .azure ? account.tenant : nil
      access_tokens = []
    }
  }
  struct URLStatus: Encodable {
    var url: String
    var host: String
    @Null var path: String? = nil
    /// The rule that serves it (`[host H/P]`, `[host H]`, `hosts = H of [account A]`), or nil.
    @Null var rule: String? = nil
    @Null var account: String? = nil
    @Null var scopes: [String]? = nil
    @Null var username: String? = nil
    /// What `get` would hand out: `cached` (with `expires_on`), `refresh` (a new token first), or
    /// `sign-in` (the account is not signed in); nil when no account serves the URL.
    @Null var token: String? = nil
    @Null var token_expires_on: Int64? = nil
    /// The credential helpers git runs for the URL, in order.
    var helpers: [String]
    var warnings: [String]


    /// Fills `token` from the account's cached tokens as `get` would choose (the refresh margin,
    /// capped at half the token's lifetime, is approximated by the margin alone).
    mutating func attach(_ account: Account, margin: Int, now: Int64) {
      guard let scopes else { return }
      let want = scopes.sorted()
      if let t = account.access_tokens.last(where: { $0.scopes == want }), t.expires_on - now >= Int64(margin) {
        token = "cached"
        token_expires_on = t.expires_on
      } else {
        token = "refresh"
      }
    }
  }

  var agent = Agent(running: false, pid: nil, socket: "")
  var store = Store(kind: "", state: "", detail: nil)
  var accounts: [Account] = []
  @Null var url: URLStatus? = nil


  func text(now: Int64) -> String {
    func clean(_ s: String) -> String { TerminalText.clean(s) }
    var lines: [String] = []
    lines.append(agent.running ? "agent: running (pid \(agent.pid.map(String.init) ?? "?")) at \(agent.socket)" : "agent: not running (\(agent.socket))")
    lines.append("store: \(store.kind), \(store.state)" + (store.detail.map { " (\(clean($0)))" } ?? ""))
    if let u = url {
      lines.append("url: \(clean(u.url))")
      if let rule = u.rule, let account = u.account {
        lines.append("  served by account '\(account)' through \(clean(rule)); scopes \(u.scopes?.joined(separator: " ") ?? "")"
          + (u.username.map { "; username \(clean($0))" } ?? ""))
        switch u.token {
        case "cached": lines.append("  get hands out the cached access token: \(max(0, (u.token_expires_on ?? now) - now)) s left (until \(RFC3339.utc(u.token_expires_on ?? now)))")
        case "refresh": lines.append("  get refreshes first (no cached access token for these scopes with enough time left)")
        case "sign-in": lines.append("  get has nothing to hand out: run 'tokenbroker login \(account)'")
        default: lines.append("  get: the store could not be read")
        }
      } else {
        lines.append("  no account serves it: get prints nothing and git asks the next helper")
      }
      lines.append("  git's credential helpers for it: " + (u.helpers.isEmpty ? "none" : u.helpers.map { "'\(clean($0))'" }.joined(separator: ", ")))
      for w in u.warnings { lines.append("  warning: \(clean(w))") }
    }
    for a in accounts {
      lines.append("account \(a.name) (\(a.provider)):")
      switch a.signed_in {
      case true?:
        lines.append("  signed in" + (a.identity.map { " as \(clean($0))" } ?? "") + (a.tenant.map { ", tenant \(clean($0))" } ?? ""))
        if let t = a.refresh_token_obtained_at {
          lines.append(
            "  refresh token obtained \(RFC3339.utc(t)); "
              + (a.refresh_token_expires_on.map { "the provider says it expires \(RFC3339.utc($0))" }
                ?? "its expiry is not told by the provider"))
        }
        if a.access_tokens.isEmpty { lines.append("  no access token cached") }
        for t in a.access_tokens {
          lines.append("  access token [\(t.scopes.joined(separator: " "))]: \(t.seconds_left) s left (until \(RFC3339.utc(t.expires_on)))")
        }
      case false?:
        // A sign-in that died says how and since when (interface.md §8.1); one never made or
        // ended by the user is just not signed in.
        if let state = a.state, let reason = a.state_reason, reason != SignInReason.neverSignedIn.rawValue {
          let since = a.state_since.map { " since \(RFC3339.utc($0))" } ?? ""
          let until = a.state_until.map { ", quiet until \(RFC3339.utc($0))" } ?? ""
          lines.append("  \(state) (\(reason))\(since)\(until): run 'tokenbroker login \(a.name)'")
        } else {
          lines.append("  not signed in: run 'tokenbroker login \(a.name)'")
        }
      case nil: lines.append("  unknown: the store could not be read")
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
