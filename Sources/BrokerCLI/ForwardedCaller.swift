import BrokerCore
import BrokerWire
import Glibc

/// The full program at the far end of a forwarded agent (`TOKENBROKER_AGENT_SOCKET` names a
/// forwarded socket, `AgentEndpoint.isForwarded`; interface.md §8): the agent's machine holds the
/// config and the store, so nothing here may sign in, sign out, unlock, edit a config or serve a
/// token from a store of this machine. The front sends `token get` and the helper actions to the
/// agent; what reaches this program anyway is refused, except help, `version`, `forward` and git's
/// `capability`, which touch no store.
enum ForwardedCaller {
  /// The refusal for `arguments` (the whole argv) in `environment`, or nil when it may run.
  static func refusal(_ arguments: [String], environment: [String: String], inAgent: Bool) -> ForwardRefusal? {
    guard !inAgent, AgentEndpoint(environment: { environment[$0] }, uid: getuid()).isForwarded else { return nil }
    let name = arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "tokenbroker"
    // The global options read as the front and the CLI read them; then the command's own words.
    let before = GlobalOptionScan(Array(arguments.dropFirst())).words.prefix { $0 != "--" }
    if before.contains(where: { $0 == "--help" || $0 == "-h" || $0 == "--version" }) { return nil }
    let words = before.filter { !$0.hasPrefix("-") }
    let isHelper = name.hasPrefix("git-credential-") || name.hasPrefix("docker-credential-")
    if isHelper ? words.first == "capability" : [nil, "help", "version", "forward", "capability"].contains(words.first) {
      return nil
    }
    let command = (isHelper ? [name] : ["tokenbroker"]) + words.prefix(2)
    let path = environment["TOKENBROKER_AGENT_SOCKET"] ?? ""
    return .notServed(what: "'\(command.joined(separator: " "))' (TOKENBROKER_AGENT_SOCKET=\(path))")
  }
}
