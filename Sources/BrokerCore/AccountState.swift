#if canImport(Glibc)
  import Glibc
#endif
import Synchronization

/// Why an account needs signing in (interface.md §8.1, `status --json`'s `state_reason`).
public enum SignInReason: String, Sendable, Equatable, CaseIterable {
  /// The provider rejected the refresh token (`invalid_grant`, RFC 6749 §5.2).
  case rejected
  /// The provider said the grant was revoked.
  case revoked
  /// The refresh token reached a lifetime the provider had stated for it.
  case expired
  /// The account is configured and no sign-in was ever recorded for it.
  case neverSignedIn = "never-signed-in"
}

/// What an account needs from its user (interface.md §8.1), kept beside the refresh lock in the
/// runtime directory so it outlives a deleted refresh token and an agent restart.
public struct SignInNeed: Sendable, Equatable {
  /// Unix seconds when the sign-in was found dead, or nil (never signed in).
  public var since: Int64?
  public var reason: SignInReason
  /// What the provider said (the OAuth error summary), one line, never a token; nil when nothing.
  public var detail: String?
  /// Who was signed in (the identity recorded at sign-in), for the notification; nil when unknown.
  public var identity: String?

  public init(since: Int64?, reason: SignInReason, detail: String? = nil, identity: String? = nil) {
    self.since = since
    self.reason = reason
    self.detail = detail
    self.identity = identity
  }
}

/// One account's state (interface.md §8.1). Only the refresh token in the store says whether an
/// account is signed in; a recorded state says what happened when it is not.
public enum AccountState: Sendable, Equatable {
  case signedIn
  /// After `logout` or `revoke` (the user's own choice: never notified); `since` in Unix seconds.
  case signedOut(since: Int64?)
  case signInNeeded(SignInNeed)
  /// A notification is up or a sign-in flow runs.
  case signInPending(SignInNeed)
  /// Quiet after a dismissed notification or an unfinished flow, until `until` (Unix seconds).
  case cooldown(SignInNeed, until: Int64)

  /// The name `status --json` shows as `state`.
  public var name: String {
    switch self {
    case .signedIn: "signed-in"
    case .signedOut: "signed-out"
    case .signInNeeded: "sign-in-needed"
    case .signInPending: "sign-in-pending"
    case .cooldown: "cooldown"
    }
  }

  /// The need behind a state that is not signed in or out.
  public var need: SignInNeed? {
    switch self {
    case .signedIn, .signedOut: nil
    case .signInNeeded(let need), .signInPending(let need), .cooldown(let need, _): need
    }
  }

  /// The state as it stands at `now`: a cooldown that has ended is the need again.
  public func at(_ now: Int64) -> AccountState {
    if case .cooldown(let need, let until) = self, until <= now { return .signInNeeded(need) }
    return self
  }

  /// The state of an account with no refresh token stored, from what was recorded for it: none
  /// (or `signed-in`, left by a sign-in whose refresh token went without tokenbroker, such as a
  /// keyring reset or `secret-tool clear`) is never signed in, or signed out.
  public static func withoutRefreshToken(recorded: AccountState?, now: Int64) -> AccountState {
    switch recorded?.at(now) {
    case nil: .signInNeeded(SignInNeed(since: nil, reason: .neverSignedIn))
    case .signedIn?: .signedOut(since: nil)
    case let state?: state
    }
  }

  /// The words of a caller's one line that say what the user is told of this state (interface.md
  /// §8.1), after the need: `a notification was sent`, `sign-in in progress`, `dismissed; quiet
  /// until HH:MM` (local time); nil when there is nothing to add.
  public var progress: String? {
    switch self {
    case .signInPending: "a notification was sent"
    case .cooldown(_, let until): "dismissed; quiet until \(LocalTime.hoursMinutes(until))"
    default: nil
    }
  }
}

/// Where each account's state is kept (interface.md §8.1): `AccountStateFile` in the runtime
/// directory, or memory (`MemoryAccountStates`) for tests and when no runtime directory can be
/// used. Best effort both ways: a state that cannot be read is none, one that cannot be written is
/// lost, never an error for the caller (the refresh token in the store is what signs in).
public protocol AccountStates: Sendable {
  /// What was recorded for `account`, or nil.
  func recorded(account: String) -> AccountState?
  /// Records `state` for `account`, replacing what was there.
  func record(_ state: AccountState, account: String)
}

/// States kept in this process's memory.
public final class MemoryAccountStates: AccountStates {
  private let table = Mutex<[String: AccountState]>([:])

  public init() {}
  public func recorded(account: String) -> AccountState? { table.withLock { $0[account] } }
  public func record(_ state: AccountState, account: String) { table.withLock { $0[account] = state } }
}

/// Local wall-clock times for messages.
public enum LocalTime {
  /// `HH:MM` of Unix seconds `t` in the process's time zone (`TZ`, else /etc/localtime).
  public static func hoursMinutes(_ t: Int64) -> String {
    var seconds = time_t(t)
    var parts = tm()
    guard localtime_r(&seconds, &parts) != nil else { return "?" }
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(two(parts.tm_hour)):\(two(parts.tm_min))"
  }
}
