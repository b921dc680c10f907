import BrokerCore
import BrokerSystem
import Synchronization

/// The agent's one desktop notification per account whose sign-in died (interface.md §8.1),
/// posted and listened to on one long-lived session-bus connection (`DesktopNotifications`).
///
/// - The first non-interactive caller answered "sign-in needed" posts it (`signInNeeded`), once the
///   store confirms the account is in `sign-in-needed` (not signed out, pending or cooling down);
///   callers arriving meanwhile post nothing. A posted notification records `sign-in-pending`.
/// - No bus, no server (`ServiceUnknown`) or `[broker] notify = off`: nothing is posted, the state
///   stays, and no new attempt is made for `reauth-cooldown` seconds; no caller ever waits for it.
/// - `dismiss`, or `NotificationClosed` reason 2 with no action invoked on it before, starts the
///   cooldown (`AccountState.cooldown`); reasons 1, 3 and 4 change no state. A notification
///   whose account is signed in or out again (`settled`) is closed.
/// - While a notification of its own is up, `outstanding` is true: the agent does not exit for
///   idleness.
public final class SignInNotices: Sendable {
  /// Asks the store what the account's state is now (`TokenService.accountState`); nil when it
  /// cannot tell (a locked keyring).
  public typealias StateCheck = @Sendable () async -> AccountState?
  /// Starts the interactive flow of a notification the user clicked (`default` or `signin`).
  public typealias FlowStarter = @Sendable (_ account: String) -> Void

  struct Posted {
    var id: UInt32
    var need: SignInNeed
    /// An action was invoked on it: a close that follows is no dismissal.
    var acted = false
    /// Its sign-in flow runs (one at a time).
    var flowing = false
    var provider: String
    var cooldown: Int
    var states: any AccountStates
    var check: StateCheck
  }

  struct Table {
    /// Accounts whose notification is being posted now.
    var posting: Set<String> = []
    var posted: [String: Posted] = [:]
    /// Unix seconds before which no new attempt is made for an account whose post failed.
    var quietUntil: [String: Int64] = [:]
  }

  private let table = Mutex(Table())
  private let connection = Mutex<Task<DesktopNotifications?, Never>?>(nil)
  private let busAddress: String
  private let time: any TimeSource
  private let log: @Sendable (String) -> Void
  private let startFlow = Mutex<FlowStarter?>(nil)

  /// - Parameters:
  ///   - busAddress: the agent's session bus (`DBUS_SESSION_BUS_ADDRESS`); empty: none, nothing
  ///     is ever posted.
  ///   - log: one line per notification posted, failed or answered (never a secret).
  public init(busAddress: String, time: any TimeSource = SystemTime(), log: @escaping @Sendable (String) -> Void) {
    self.busAddress = busAddress
    self.time = time
    self.log = log
  }

  /// Where a click on `default` or `signin` goes.
  public func onSignIn(_ starter: @escaping FlowStarter) { startFlow.withLock { $0 = starter } }

  /// A notification of the agent's own is up or being posted.
  public var outstanding: Bool { table.withLock { !$0.posted.isEmpty || !$0.posting.isEmpty } }

  /// A non-interactive caller of `account` was answered "sign-in needed": posts the account's one
  /// notification unless one is up, being posted, or the account is in another state; returns at
  /// once (the post runs on its own).
  /// - Parameters:
  ///   - provider: named in the body with the identity.
  ///   - states: where `sign-in-pending` and `cooldown` are recorded.
  ///   - check: the account's state as the store has it now.
  public func signInNeeded(
    account: String, provider: String, settings: BrokerSettings, states: any AccountStates, check: @escaping StateCheck
  ) {
    guard settings.notify == .auto, !busAddress.isEmpty else { return }
    let now = time.now
    let go = table.withLock { t -> Bool in
      guard !t.posting.contains(account), t.posted[account] == nil, (t.quietUntil[account] ?? 0) <= now else { return false }
      t.posting.insert(account)
      return true
    }
    guard go else { return }
    Task {
      await post(account: account, provider: provider, cooldown: settings.reauthCooldown, states: states, check: check)
      _ = table.withLock { $0.posting.remove(account) }
    }
  }

  private func post(
    account: String, provider: String, cooldown: Int, states: any AccountStates, check: @escaping StateCheck
  ) async {
    guard case .signInNeeded(let need)? = await check() else { return }
    let quiet = { self.table.withLock { $0.quietUntil[account] = self.time.now + Int64(cooldown) } }
    guard let bus = await connected() else {
      log("no notification for '\(account)': the session bus cannot be reached")
      return quiet()
    }
    let actions = await bus.capabilities().contains("actions")
    let notice = Self.notice(account: account, provider: provider, identity: need.identity, actions: actions)
    let failure = Mutex("")
    guard let id = await bus.notify(notice, replacing: 0, detail: { text in failure.withLock { $0 = text } }) else {
      log("no notification for '\(account)': \(failure.withLock { $0 })")
      return quiet()
    }
    states.record(.signInPending(need), account: account)
    log("posted notification \(id) for '\(account)'")
    // A server that keeps no id (0) gets no replace or close, and sends no signal of it.
    guard id != 0 else { return }
    track(account: account, id: id, need: need, provider: provider, cooldown: cooldown, states: states, check: check)
  }

  /// Keeps notification `id` of `account` as posted: its signals are answered from now on.
  func track(
    account: String, id: UInt32, need: SignInNeed, provider: String, cooldown: Int, states: any AccountStates,
    check: @escaping StateCheck
  ) {
    table.withLock {
      $0.posted[account] = Posted(id: id, need: need, provider: provider, cooldown: cooldown, states: states, check: check)
    }
  }

  /// The notification of interface.md §8.1: summary `Sign-in needed: ACCOUNT`, body the provider
  /// and identity, `default`/`signin` ("Sign in") and `dismiss` ("Not now") where the server has
  /// `actions`, else the body names `tokenbroker login ACCOUNT`; critical, resident, no expiry.
  /// Text from elsewhere (the identity) is escaped for servers that read body markup.
  public static func notice(account: String, provider: String, identity: String?, actions: Bool)
    -> DesktopNotifications.Notice
  {
    var body = escaped(identity.map { "\(provider): \($0)" } ?? provider)
    if !actions { body += "\nRun: tokenbroker login \(escaped(account))" }
    return DesktopNotifications.Notice(
      appName: "tokenbroker", summary: "Sign-in needed: \(account)", body: body,
      actions: actions ? [("default", "Sign in"), ("signin", "Sign in"), ("dismiss", "Not now")] : [],
      urgency: 2, resident: true, expireTimeout: 0)
  }

  static func escaped(_ text: String) -> String {
    text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
  }

  /// What the server said of one of its notifications (called on the connection's thread).
  func handle(_ event: DesktopNotifications.Event) {
    switch event {
    case .actionInvoked(let id, let action):
      guard let (account, posted) = find(id) else { return }
      log("notification \(id) of '\(account)': action '\(action)'")
      if action == "dismiss" {
        coolDown(account, posted)
        Task { await self.connected()?.close(id) }
      } else if action == "default" || action == "signin" {
        let start = table.withLock { t -> Bool in
          t.posted[account]?.acted = true
          guard t.posted[account]?.flowing == false else { return false }
          t.posted[account]?.flowing = true
          return true
        }
        if start { startFlow.withLock { $0 }?(account) }
      }
    case .closed(let id, let reason):
      guard let (account, posted) = find(id) else { return }
      log("notification \(id) of '\(account)' closed (reason \(reason))")
      // A flow it started goes on: the flow's end settles the state.
      if !posted.flowing { _ = table.withLock { $0.posted.removeValue(forKey: account) } }
      if reason == 2 && !posted.acted { coolDown(account, posted) }
    }
  }

  private func find(_ id: UInt32) -> (String, Posted)? {
    table.withLock { t in t.posted.first { $0.value.id == id }.map { ($0.key, $0.value) } }
  }

  private func coolDown(_ account: String, _ posted: Posted) {
    posted.states.record(.cooldown(posted.need, until: time.now + Int64(posted.cooldown)), account: account)
    _ = table.withLock { $0.posted.removeValue(forKey: account) }
  }

  /// The device code of the flow a click started, shown by replacing the notification's body
  /// (interface.md §8.1): `userCode` and where to enter it; the device code itself never.
  public func showCode(account: String, userCode: String, at uri: String) {
    guard let posted = table.withLock({ $0.posted[account] }) else { return }
    var notice = Self.notice(account: account, provider: posted.provider, identity: posted.need.identity, actions: false)
    notice.body = Self.escaped("Enter the code \(userCode) at \(uri)")
    Task {
      guard let bus = await connected() else { return }
      guard let id = await bus.notify(notice, replacing: posted.id) else { return }
      // A server may give a bubble it had already closed a new id: later closes go to that one.
      if id != 0 { table.withLock { $0.posted[account]?.id = id } }
      log("notification \(id) of '\(account)' shows the device code")
    }
  }

  /// The flow a click started has ended: its success closes the notification (the sign-in
  /// recorded `signed-in`); anything else closes it too and starts the cooldown.
  public func flowEnded(account: String, succeeded: Bool) async {
    guard let posted = table.withLock({ $0.posted.removeValue(forKey: account) }) else { return }
    if !succeeded {
      posted.states.record(.cooldown(posted.need, until: time.now + Int64(posted.cooldown)), account: account)
    }
    await connected()?.close(posted.id)
  }

  /// The account's notification is closed when the store says it is signed in or out again (a
  /// `login` or `logout` in any process; the agent hears of each as a drop).
  public func settled(account: String) {
    guard let posted = table.withLock({ $0.posted[account] }), !posted.flowing else { return }
    Task {
      switch await posted.check() {
      case .signedIn?, .signedOut?:
        guard table.withLock({ $0.posted[account]?.id == posted.id ? $0.posted.removeValue(forKey: account) : nil }) != nil
        else { return }
        log("closing notification \(posted.id): '\(account)' is signed in or out again")
        await connected()?.close(posted.id)
      default: return
      }
    }
  }

  /// The one connection, made at first use; nil while the bus cannot be reached (asked again next
  /// time).
  private func connected() async -> DesktopNotifications? {
    guard !busAddress.isEmpty else { return nil }
    let task = connection.withLock { slot -> Task<DesktopNotifications?, Never> in
      if let slot { return slot }
      let address = busAddress
      let log = self.log
      // The notices live as long as the agent: the connection may hold them.
      let made = Task { [self] () -> DesktopNotifications? in
        await DesktopNotifications.connect(address: address, events: { self.handle($0) }, detail: { log("notifications: " + $0) })
      }
      slot = made
      return made
    }
    let bus = await task.value
    if bus == nil { connection.withLock { if $0 == task { $0 = nil } } }
    return bus
  }
}
