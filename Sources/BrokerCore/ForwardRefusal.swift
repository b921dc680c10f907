/// What a caller over a forwarded agent (interface.md §8: its forwarding socket, reached through
/// `ssh -R` or a container's socket mount) may not do: one line, exit 64, or exit 3 for an account
/// without `forward = yes`. The agent refuses on its forwarding socket; the full program refuses
/// at the far end before it touches a store of its own.
public enum ForwardRefusal: Error, Sendable, Equatable, CustomStringConvertible {
  /// Exit 64. `what` (a command, an agent operation) is not served over a forwarded agent.
  case notServed(what: String)
  /// Exit 3. The account's tokens are not forwarded.
  case accountNotForwarded(account: String)

  public var exitStatus: ExitStatus {
    switch self {
    case .notServed: return .usage
    case .accountNotForwarded: return .signInRequired
    }
  }

  public var description: String {
    switch self {
    case .notServed(let what):
      return "\(what) cannot be done over a forwarded agent; run it on the machine where the agent runs"
    case .accountNotForwarded(let account):
      return "the agent does not forward the tokens of '\(account)'; set 'forward = yes' in its [account \(account)] group on the machine where the agent runs"
    }
  }
}
