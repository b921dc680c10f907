/// Process exit codes (interface.md §6). Mapped from errors in one place: BrokerCLI's `ErrorMapping`.
public enum ExitStatus: Int32, Sendable {
  case success = 0
  /// Other failure; malformed helper request; `agent status` when not running.
  case failure = 1
  /// Sign-in needed: not signed in, refresh token rejected, consent or MFA needed, cookies expired.
  case signInRequired = 3
  /// Provider or network unavailable (after retries), TLS failure, revocation failed.
  case providerUnavailable = 4
  /// Keyring unavailable or locked, or a store that does not read back what was written.
  case storeUnavailable = 5
  /// Interactive sign-in did not complete.
  case loginIncomplete = 6
  /// Another `login` for the same account is in progress.
  case loginInProgress = 7
  /// Usage or configuration error (EX_USAGE).
  case usage = 64
}
