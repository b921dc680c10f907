import BrokerBasics
import BrokerWire
import Glibc

/// The front at the far end of a forwarded agent (`AgentEndpoint.isForwarded`; interface.md §8):
/// no agent is ever started there, and a forwarded socket that cannot be used is exit 4 at once,
/// naming the socket, never a reason to serve the call from this machine's store.
enum ForwardedAgent {
  /// A connected descriptor; exits 4 with one line when the socket does not answer.
  static func connect(_ endpoint: AgentEndpoint) -> Int32 {
    switch AgentClient.connect(to: endpoint.socketPath) {
    case .connected(let fd): return fd
    case .absent: fail(endpoint, "does not answer (no socket there, or nothing listens on it)")
    case .failed(let error) where error == EPERM: fail(endpoint, "belongs to another user")
    case .failed(let error): fail(endpoint, "cannot be reached (\(Errno(error).description))")
    }
  }

  /// Exits 4 with `tokenbroker: the forwarded agent at PATH <what>; …` (on stdout too under the
  /// docker helper name: `FileDescriptor.error`).
  static func fail(_ endpoint: AgentEndpoint, _ what: String) -> Never {
    FileDescriptor.error(
      "tokenbroker: the forwarded agent at \(endpoint.socketPath) \(what); reconnect the forward (ssh -R, or the container's socket mount) and try again\n")
    exit(4)
  }
}
