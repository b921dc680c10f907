/// Why the agent cannot start serving. Messages follow `what failed; what to do`.
public enum AgentSetupError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The socket directory is unsafe or cannot be made (the message says which and how to fix it).
  case directory(String)
  /// Another agent holds `<socket>.lock` (it serves this socket): not an error for `agent run`.
  case alreadyRunning(socket: String)
  /// A system call failed: what was attempted, on which path, `strerror`.
  case call(what: String, path: String, reason: String)

  public var description: String {
    switch self {
    case .directory(let message): return message
    case .alreadyRunning(let socket): return "an agent already serves '\(socket)'; stop it first with 'tokenbroker agent stop'"
    case .call(let what, let path, let reason): return "cannot \(what) '\(path)' (\(reason)); check its permissions"
    }
  }
}
