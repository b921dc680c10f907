internal import BrokerWire
internal import CLibsecret
internal import Synchronization

extension LibsecretStore {
  /// Forgets libsecret's process-wide Secret Service object (`secret_service_disconnect`), so the
  /// next operation connects and opens a session afresh; except while a connection made ahead
  /// (`connectAhead`) is being made or is younger than `aheadMilliseconds`: the next operation
  /// keeps that one, as new as the one it would make, once the bus says the daemon it calls still
  /// owns the service's name (`keepOnlyCurrentConnection`).
  ///
  /// For a long-running process (the agent): it runs no GLib main loop, so the cached proxy never
  /// hears that the keyring daemon was replaced (its calls then go to a unique bus name that is
  /// gone) or that a collection was locked or unlocked. A one-shot process never needs it. Safe
  /// from any thread: operations under way keep their own reference.
  public static func forgetConnection() {
    let keep = ahead.withLock { state in
      switch state.phase {
      case .none: return false
      case .pending: break
      case .made(let at, let keptFor):
        guard MonotonicClock.milliseconds - at < keptFor else {
          state.phase = .none
          return false
        }
      }
      state.check = true
      return true
    }
    if !keep { secret_service_disconnect() }
  }

  /// On the libsecret queue, before an operation connects: a connection made ahead that
  /// `forgetConnection` kept is forgotten after all when its daemon no longer owns the service's
  /// name (replaced, or gone).
  static func keepOnlyCurrentConnection(deadline: Deadline) {
    guard ahead.withLock({ state in defer { state.check = false }; return state.check }) else { return }
    if LibsecretSession.keptServiceIsCurrent(deadline: deadline) { return }
    ahead.withLock { $0.phase = .none }
    secret_service_disconnect()
  }

  /// Connects to the Secret Service and opens its session (`secret_service_get_sync` with
  /// `SECRET_SERVICE_OPEN_SESSION`: the process's shared connection, which libsecret keeps) on the
  /// libsecret queue, bounded by `timeout` seconds, without waiting: the operations queued after
  /// it find the connection made. For the agent, whose first request reads the keyring: the
  /// D-Bus connection and the session's key exchange are made while that request is on its way.
  /// It raises no prompt and reads nothing: a keyring locked or absent now gives the first
  /// operation the answer it would have had anyway, and a failure (no session bus, no service)
  /// caches nothing, so that operation connects again and reports it.
  public static func connectAhead(timeout: Double = 10) {
    connectAhead(timeout: timeout, keptFor: aheadMilliseconds, made: { _ in })
  }

  /// `connectAhead(timeout:)`, the connection counting as new for `keptFor` ms; `made` is given
  /// the session's D-Bus path on the libsecret queue, or nil when no connection was made (tests).
  static func connectAhead(timeout: Double, keptFor: Int, made: @escaping @Sendable (String?) -> Void) {
    ahead.withLock { $0 = Ahead(phase: .pending) }
    let deadline = Deadline(milliseconds: max(1, Int(timeout * 1000)))
    queue.async {
      defer { deadline.finish() }
      let session = try? LibsecretSession(deadline: deadline)
      ahead.withLock { state in
        guard case .pending = state.phase else { return }
        state.phase = session == nil ? .none : .made(at: MonotonicClock.milliseconds, keptFor: keptFor)
      }
      made(session?.sessionPath)
    }
  }

  /// How long, in ms, a connection made ahead counts as new (`forgetConnection` keeps it): the
  /// agent's first requests come within milliseconds of its start.
  static let aheadMilliseconds = 2000

  struct Ahead {
    enum Phase {
      case none
      /// `connectAhead` is queued or under way.
      case pending
      /// Made at this `MonotonicClock.milliseconds`, new for `keptFor` ms.
      case made(at: Int, keptFor: Int)
    }
    var phase: Phase = .none
    /// `forgetConnection` kept it: the next operation asks whether its daemon is current.
    var check = false
  }

  static let ahead = Mutex<Ahead>(Ahead())
}
