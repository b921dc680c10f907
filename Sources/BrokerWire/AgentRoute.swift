/// Which calls the agent serves (interface.md §1, §8): `AgentCommands.forms` (the git helper
/// actions, as `tokenbroker ACTION` and under a `git-credential-*` name, and `token get`) and the
/// docker helper's `AgentCommands.dockerForms` (under a `docker-credential-*` name). The front
/// routes with it, and the agent refuses (`AgentProtocol.notServed`) any `run` request it does not
/// accept, so both agree by construction.
public struct AgentRoute: Sendable, Equatable {
  /// The program name: argv[0]'s last path component.
  public var name: String
  /// The arguments to send: argv after argv[0] without `--config FILE` / `--config=FILE`.
  public var arguments: [String]
  /// The `--config` value, when one was given (as written; the caller makes it absolute).
  public var configFile: String?
  /// True when the command reads standard input (`get`, `store`, `erase`).
  public var readsInput: Bool

  /// The route of a call, or nil when the full program must run it (every other command, `--help`,
  /// unknown helper actions, malformed global options).
  /// - Parameter argv: the whole argv, argv[0] included.
  public static func classify(_ argv: [String]) -> AgentRoute? {
    guard let first = argv.first else { return nil }
    // By bytes, not Characters (a split by Character cost more than the rest of this function).
    let name = first.utf8.lastIndex(of: UInt8(ascii: "/")).flatMap { String(first.utf8[first.utf8.index(after: $0)...]) } ?? first
    let rest = Array(argv.dropFirst())
    if name.hasPrefix("git-credential-") {
      // Git appends the action alone; the options of a `tokenbroker` command line do not apply.
      guard let action = rest.first, isWord(action), AgentCommands.forms.contains(action) else { return nil }
      return AgentRoute(name: name, arguments: rest, configFile: nil, readsInput: AgentCommands.inputForms.contains(action))
    }
    if name.hasPrefix("docker-credential-") {
      guard let action = rest.first, AgentCommands.dockerForms.contains(action) else { return nil }
      return AgentRoute(
        name: name, arguments: rest, configFile: nil, readsInput: AgentCommands.dockerInputActions.contains(action))
    }
    let scan = GlobalOptionScan(rest)
    let words = scan.words
    if scan.missingConfigValue || words.contains("--") || words.contains("--help") || words.contains("-h") { return nil }
    guard let command = words.first, isWord(command) else { return nil }
    // A one-word form takes no more words (the full program reports the extra ones).
    let form: String
    if AgentCommands.forms.contains(command) {
      guard words.count == 1 else { return nil }
      form = command
    } else {
      guard words.count >= 2, isWord(words[1]) else { return nil }
      form = command + " " + words[1]
      guard AgentCommands.forms.contains(form) else { return nil }
    }
    return AgentRoute(
      name: name, arguments: scan.withoutConfig, configFile: scan.configFile, readsInput: AgentCommands.inputForms.contains(form))
  }

  /// The seconds of `--wait SECONDS` (or `--wait=SECONDS`) among the arguments, at most a day;
  /// 0 without one (interface.md §8.1: `token get --wait`).
  public var waitSeconds: Int {
    var next = false
    for argument in arguments {
      if next { return Self.seconds(argument) }
      if argument == "--wait" { next = true } else if argument.hasPrefix("--wait=") { return Self.seconds(String(argument.dropFirst(7))) }
    }
    return 0
  }

  private static func seconds(_ text: String) -> Int { min(max(Int(text) ?? 0, 0), 86_400) }

  /// True for an argument without a space: `"token get"` as one argument is no form.
  private static func isWord(_ s: String) -> Bool { !s.utf8.contains(UInt8(ascii: " ")) }
}
