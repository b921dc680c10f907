import BrokerCore
import BrokerWire
import Glibc

/// `tokenbroker forward [--json]` (interface.md §3, §8): makes sure the agent runs (its
/// forwarding socket lives as long as it does) and no longer exits for idleness
/// (`AgentEndpoint.forwardKeepPath`, until `agent stop`), then prints the forwarding socket's path, the
/// `ssh` option and the ssh_config `RemoteForward` line that forward it, and on stderr what the
/// far side sets.
enum ForwardCommand {
  /// The far end's socket: in /tmp (sshd creates no directory), named for the remote user (`%r`,
  /// ssh_config(5) TOKENS, which `-R` expands too), its name ending in `forward.sock` so that the
  /// far end's tokenbroker knows it for a forwarded agent's (`AgentEndpoint.isForwarded`).
  static let remotePath = remoteSocket(user: "%r")

  /// The far end's socket of `user`.
  static func remoteSocket(user: String) -> String { "/tmp/tokenbroker-\(user)-" + AgentEndpoint.forwardSuffix }

  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let a = try Arguments(args, valued: [], flags: ["json"], usage: Help.usage("forward"))
    _ = try a.expectPositionals([])
    let endpoint = AgentCommand.endpoint(runtime)
    do { _ = try await AgentCommand.ensureRunning(runtime: runtime, endpoint: endpoint) } catch {
      runtime.context.say(error.description)
      return .failure
    }
    // From now on the agent stays: a forward is used from the far side, which cannot start it.
    let keep = open(endpoint.forwardKeepPath, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    if keep >= 0 { close(keep) } else { runtime.verbose("cannot create \(endpoint.forwardKeepPath); the agent may exit when idle") }
    let local = endpoint.forwardSocketPath
    let option = "-R \(remotePath):\(local)"
    let line = "RemoteForward \(remotePath) \(local)"
    if a.flag("json") {
      struct Doc: Encodable {
        var socket: String
        var ssh_option: String
        var remote_forward: String
        var remote_socket: String
      }
      runtime.context.writeOutput(
        JSONText.encode(Doc(socket: local, ssh_option: option, remote_forward: line, remote_socket: remotePath)) + "\n")
    } else {
      runtime.context.writeOutput("\(local)\n\(option)\n\(line)\n")
      runtime.context.say(
        "on the far side, export TOKENBROKER_AGENT_SOCKET=\(remoteSocket(user: "$USER")); only accounts with 'forward = yes' are served there")
    }
    return .success
  }
}
