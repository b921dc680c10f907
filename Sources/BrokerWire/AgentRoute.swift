/// Which calls the agent serves (interface.md §1, §8): the git helper actions (as `tokenbroker
/// ACTION` and under a `git-credential-*` name), the docker helper actions (under a
/// `docker-credential-*` name) and `token get`. The front routes with it, and the agent refuses
/// (`AgentProtocol.notServed`) any `run` request it does not accept, so both agree by construction.
public struct AgentRoute: Sendable, Equatable {
  /// The program name: argv[0]'s last path component.
  public var name: String
  /// The arguments to send: argv after argv[0] without `--config FILE` / `--config=FILE`.
  public var arguments: [String]
  /// The `--config` value, when one was given (as written; the caller makes it absolute).
  public var configFile: String?
  /// True when the command reads standard input (`get`, `store`, `erase`).
  public var readsInput: Bool

  // Arrays, not Sets: a Set<String> costs the front a run-time metadata instantiation and a scan of
  // every protocol conformance in the binary (Hashable), more than the rest of the call.
  static let gitActions = ["get", "store", "erase", "capability"]
  static let dockerActions = ["get", "store", "erase", "list"]
  static let inputActions = ["get", "store", "erase"]

  /// The route of a call, or nil when the full program must run it (every other command, `--help`,
  /// unknown helper actions, malformed global options).
  /// - Parameter argv: the whole argv, argv[0] included.
  public static func classify(_ argv: [String]) -> AgentRoute? {
    guard let first = argv.first else { return nil }
    // By bytes, not Characters (a split by Character cost more than the rest of this function).
    let name = first.utf8.lastIndex(of: UInt8(ascii: "/")).flatMap { String(first.utf8[first.utf8.index(after: $0)...]) } ?? first
    let rest = Array(argv.dropFirst())
    if name.hasPrefix("git-credential-") || name.hasPrefix("docker-credential-") {
      let actions = name.hasPrefix("git-") ? gitActions : dockerActions
      guard let action = rest.first, actions.contains(action) else { return nil }
      return AgentRoute(name: name, arguments: rest, configFile: nil, readsInput: inputActions.contains(action))
    }
    // Global options anywhere before `--`, as BrokerCLI's GlobalOptions reads them.
    var words: [String] = []
    var kept: [String] = []
    var config: String?
    var i = 0
    while i < rest.count {
      let a = rest[i]
      i += 1
      if a == "--" || a == "--help" || a == "-h" { return nil }
      if a == "--config" {
        guard i < rest.count else { return nil }
        config = rest[i]
        i += 1
        continue
      }
      if a.hasPrefix("--config=") {
        config = String(a.dropFirst("--config=".count))
        continue
      }
      kept.append(a)
      if a != "--verbose" { words.append(a) }
    }
    guard let command = words.first else { return nil }
    if gitActions.contains(command) {
      guard words.count == 1 else { return nil }
      return AgentRoute(name: name, arguments: kept, configFile: config, readsInput: inputActions.contains(command))
    }
    if command == "token", words.count >= 2, words[1] == "get" {
      return AgentRoute(name: name, arguments: kept, configFile: config, readsInput: false)
    }
    return nil
  }
}
