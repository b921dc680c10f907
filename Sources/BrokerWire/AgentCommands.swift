/// The calls the resident agent runs (interface.md §8), declared for the front, which routes with
/// these alone, and for BrokerCLI's `CommandTable`, whose declarations take `agentRuns` and
/// `readsInput` from them. Arrays of string literals: built at compile time, where a table of
/// structs with nested arrays costs the front a metadata instantiation per element type (about
/// 100,000 instructions, half of a call); and not Sets, whose Hashable conformance costs a scan of
/// every protocol conformance in the binary.
public enum AgentCommands {
  /// The forms, as `COMMAND` or `COMMAND SUBCOMMAND`; a one-word form takes no arguments.
  public static let forms = ["get", "store", "erase", "capability", "token get"]
  /// The forms that read a request on standard input.
  public static let inputForms = ["get", "store", "erase"]

  /// The docker credential helper's actions (argv[1] under a `docker-credential-*` name), those
  /// the agent runs (`version` and `--help` are the full program's) and those that read stdin.
  public static let dockerActions = ["get", "store", "erase", "list", "version"]
  public static let dockerForms = ["get", "store", "erase", "list"]
  public static let dockerInputActions = ["get", "store", "erase"]
}
