import Glibc

/// Where the agent listens (interface.md §2) and the files beside its socket, computed from the
/// environment only; the same rule as `BrokerPaths.agentSocket` in BrokerCore.
///
/// - socket: `TOKENBROKER_AGENT_SOCKET`, else `agent.sock` in the runtime directory
///   (`runtimeDirectory(environment:uid:)`);
/// - `<socket>.lock`: held (`flock`) by the one agent serving the socket; holds its pid;
/// - `<socket>.spawn`: held by the one client that is starting an agent;
/// - `forward.sock` in the socket's directory: the agent's forwarding socket (interface.md §8),
///   `forward.sock.lock` held by the agent serving it.
///
/// A socket whose file name ends in `forward.sock` is a forwarded agent's (`isForwarded`): the
/// far end of `ssh -R` or a container's socket mount. No agent is ever started over one, and the
/// full program refuses there what only the agent's own machine may do.
public struct AgentEndpoint: Sendable, Equatable {
  public var socketPath: String
  /// The directory of the socket.
  public var directory: String
  /// The per-user runtime directory (`runtimeDirectory(environment:uid:)`).
  public var runtimeDirectory: String

  /// - Parameters:
  ///   - environment: looks up one environment variable.
  ///   - uid: the real user id.
  ///   - userRuntimeRoot: where logind makes each user's runtime directory (`/run/user`).
  public init(environment: (String) -> String?, uid: UInt32, userRuntimeRoot: String = Self.userRuntimeRoot) {
    runtimeDirectory = Self.runtimeDirectory(environment: environment, uid: uid, userRuntimeRoot: userRuntimeRoot).path
    if let explicit = environment("TOKENBROKER_AGENT_SOCKET"), !explicit.isEmpty {
      socketPath = explicit
    } else {
      socketPath = runtimeDirectory + "/agent.sock"
    }
    // By bytes, not Characters ('/' is one byte; a search by Character costs the front
    // grapheme-boundary code it touches nowhere else).
    if let slash = socketPath.utf8.lastIndex(of: UInt8(ascii: "/")) {
      directory = slash == socketPath.startIndex ? "/" : String(socketPath.utf8[..<slash]) ?? "."
    } else {
      directory = "."
    }
  }

  /// Where logind makes each logged-in user's runtime directory, `/run/user/$UID`.
  public static let userRuntimeRoot = "/run/user"

  /// The per-user runtime directory (interface.md §2), the one rule for the agent's socket and the
  /// full program's files: `$XDG_RUNTIME_DIR/tokenbroker`; without an absolute `XDG_RUNTIME_DIR`,
  /// `/run/user/$UID/tokenbroker` when `/run/user/$UID` is the user's own directory with no group
  /// or other permission (logind's, which a cron job started without pam_systemd is not told of,
  /// so it finds the agent of the user's session there); else `/tmp/tokenbroker-$UID`.
  /// - Returns: the directory, and whether it is the `/tmp` fallback (whose owner and mode the
  ///   caller checks as it creates it).
  public static func runtimeDirectory(
    environment: (String) -> String?, uid: UInt32, userRuntimeRoot: String = userRuntimeRoot
  ) -> (path: String, isFallback: Bool) {
    if let runtime = environment("XDG_RUNTIME_DIR"), runtime.utf8.first == UInt8(ascii: "/") {
      return (runtime + "/tokenbroker", false)
    }
    let session = userRuntimeRoot + "/\(uid)"
    if PrivateDirectory.check(session, create: false, exclusive: true, uid: uid) == nil {
      return (session + "/tokenbroker", false)
    }
    return ("/tmp/tokenbroker-\(uid)", true)
  }

  /// The running process's endpoint (`getenv`, `getuid`).
  public static var current: AgentEndpoint {
    AgentEndpoint(environment: { name in getenv(name).map { String(cString: $0) } }, uid: getuid())
  }

  /// The file name a forwarded agent's socket ends in (`tokenbroker forward` names it so).
  public static let forwardSuffix = "forward.sock"

  /// The agent's forwarding socket: `forward.sock` beside its own socket.
  public var forwardSocketPath: String { (directory == "/" ? "" : directory) + "/" + Self.forwardSuffix }

  /// Present while the agent must not exit for idleness because `tokenbroker forward` set up a
  /// forward to it (`forward.keep` beside the socket; removed by `agent stop`): the far side
  /// cannot start the agent, and may call for the first time hours after the last local call.
  public var forwardKeepPath: String { (directory == "/" ? "" : directory) + "/forward.keep" }

  /// True when `socketPath` is a forwarded agent's (its file name ends in `forwardSuffix`).
  /// By bytes, as `init` splits the path.
  public var isForwarded: Bool { socketPath.utf8.suffix(Self.forwardSuffix.utf8.count).elementsEqual(Self.forwardSuffix.utf8) }

  public var lockPath: String { socketPath + ".lock" }
  public var spawnLockPath: String { socketPath + ".spawn" }

  /// True when the socket lives in the private runtime directory, which must be 0700.
  public var isInRuntimeDirectory: Bool { directory == runtimeDirectory }

  /// Creates the runtime directory (mode 0700 at creation, never chmod-ed afterwards) when the
  /// socket lives there, then checks the socket's directory (`PrivateDirectory`): a directory,
  /// owned by `uid`; the runtime directory with no group/other permission at all, another
  /// directory (an explicit `TOKENBROKER_AGENT_SOCKET`) not writable by group or others.
  /// - Returns: nil when the directory is safe, else one message `what failed; what to do`.
  public func prepareDirectory(uid: UInt32 = getuid()) -> String? {
    let check = PrivateDirectory.check(directory, create: isInRuntimeDirectory, exclusive: isInRuntimeDirectory, uid: uid)
    switch check {
    case nil: return nil
    case .cannotCreate?:
      return "cannot create the directory '\(directory)' (\(check!)); check its parent's permissions"
    case .cannotInspect?:
      return "cannot inspect '\(directory)' (\(check!)); create it or unset TOKENBROKER_AGENT_SOCKET"
    case let problem?:
      let fix = isInRuntimeDirectory ? "chmod 0700" : "chmod go-w"
      return "refusing to use '\(directory)' for the agent socket (\(problem)); remove it or run: \(fix) '\(directory)'"
    }
  }
}
