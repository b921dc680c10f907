import BrokerCore
import BrokerStore
import BrokerWire

/// The full program's entry point: dispatches on the name it was started under and the command
/// word, runs one command, and maps any error to one stderr line and an exit code.
public enum BrokerCommand {
  public static let version = "0.1.0"

  /// Sets up the process for the command in `arguments` (the whole argv) while its main thread is
  /// its only thread: `unlock`, which derives a store's key under the memory limits it may find,
  /// gets one malloc arena (`KeyDerivation.prepareProcess`), as every thread it starts later must
  /// share it. Called later, a thread that allocated first would already hold an arena of its
  /// own, 64 MiB of address space that only some runs map, so a store created in an `ulimit -v`
  /// might not open again in it (bug-cases-3.md X15). A process without a session bus in its
  /// environment (a cron job) takes the user's (`SessionBus.adoptUsersBus`) before any thread
  /// reads the environment.
  public static func prepareProcess(arguments: [String]) {
    SessionBus.adoptUsersBus()
    if GlobalOptionScan(Array(arguments.dropFirst())).words.first == "unlock" { KeyDerivation.prepareProcess() }
  }

  /// Runs the program. `arguments` is the whole argv, argv[0] included.
  /// - Returns: the exit status (interface.md §6); never calls `exit`.
  public static func main(arguments: [String], context: ProcessContext = .live) async -> Int32 {
    let name = arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "tokenbroker"
    var rest = Array(arguments.dropFirst())
    if let refusal = ForwardedCaller.refusal(arguments, environment: context.environment, inAgent: context.agent != nil) {
      return report(refusal, context: context, verbose: false)
    }
    if name.hasPrefix("git-credential-") {
      // Git appends the action; unknown actions are ignored with exit 0 (git's rule for helpers).
      // Git never passes --help: a person does, and gets the helper's help.
      if rest.first == "--help" || rest.first == "-h", let text = Help.command("get", []) {
        context.writeOutput(text)
        return 0
      }
      guard let action = rest.first, GitHelperCommand.actions.contains(action) else { return 0 }
      return await run(context: context, globals: GlobalOptions()) { runtime in
        try await GitHelperCommand.run(action: action, runtime: runtime)
      }
    }
    if name.hasPrefix("docker-credential-") {
      // docker/docker-credential-helpers protocol: argv[1] is the action, replies on stdout.
      return await DockerHelperCommand.main(rest, context: context)
    }
    let globals: GlobalOptions
    do { globals = try GlobalOptions.extract(from: &rest) } catch {
      return report(error, context: context, verbose: false)
    }
    if rest.first == "--version" { rest[0] = "version" }  // the spelling most tools accept
    guard let command = rest.first else {
      context.writeError(Help.top)
      return ExitStatus.usage.rawValue
    }
    let args = Array(rest.dropFirst())
    if command == "--help" || command == "-h" || command == "help" {
      // `help COMMAND`, as git and most CLIs take it: that command's help.
      // For the tests that hold the man page, README and completions to the declarations.
      if command == "help", args == ["--declarations"] {
        context.writeOutput(DeclarationDump.json() + "\n")
        return 0
      }
      if command == "help", let topic = args.first {
        guard let text = Help.command(topic, Array(args.dropFirst())) else {
          context.writeError("error: unknown command '\(topic)'\(Help.suggestion(for: topic))\n\(Help.topUsage)\n")
          return ExitStatus.usage.rawValue
        }
        context.writeOutput(text)
        return 0
      }
      context.writeOutput(Help.top)
      return 0
    }
    // Only options before `--` are ours (`exec ACCOUNT -- COMMAND --help` runs COMMAND's help).
    let own = args.firstIndex(of: "--").map { Array(args[..<$0]) } ?? args
    if own.contains("--help") || own.contains("-h") {
      if let text = Help.command(command, args) {
        context.writeOutput(text)
        return 0
      }
    }
    if command == "exec" {
      return await runStatus(context: context, globals: globals) { try await ExecCommand.run(args, runtime: $0) }
    }
    return await run(context: context, globals: globals) { runtime in
      switch command {
      case "login": return try await LoginCommand.run(args, runtime: runtime)
      case "logout": return try await LogoutCommand.run(args, runtime: runtime)
      case "revoke": return try await RevokeCommand.run(args, runtime: runtime)
      case "token": return try await TokenCommand.run(args, runtime: runtime)
      case "accounts": return try await AccountsCommand.run(args, runtime: runtime)
      case "status": return try await StatusCommand.run(args, runtime: runtime)
      case "version": return try VersionCommand.run(args, runtime: runtime)
      case "agent": return try await AgentCommand.run(args, runtime: runtime)
      case "setup-git": return try await SetupGitCommand.run(args, runtime: runtime)
      case "mail": return try await MailCommand.run(args, runtime: runtime)
      case "account": return try await AccountCommand.run(args, runtime: runtime)
      case "unlock": return try await UnlockCommand.run(args, runtime: runtime)
      case "lock": return try await LockCommand.run(args, runtime: runtime)
      case "forward": return try await ForwardCommand.run(args, runtime: runtime)
      case "get", "store", "erase", "capability":
        // git runs a helper's action with no argument after it (gitcredentials(7)): one here is
        // a person who meant `token get`.
        if let account = try Arguments(args, command: command).positionals.first {
          throw UsageError(
            "'\(command)' takes no account: it is git's credential helper action and reads git's request on "
              + "standard input; to print a token of '\(account)', run 'tokenbroker token get \(account)'",
            usage: Help.usage(command))
        }
        return try await GitHelperCommand.run(action: command, runtime: runtime)
      default:
        throw UsageError("unknown command '\(command)'\(Help.suggestion(for: command))", usage: Help.topUsage)
      }
    }
  }

  private static func run(
    context: ProcessContext, globals: GlobalOptions, _ body: (Runtime) async throws -> ExitStatus
  ) async -> Int32 {
    await runStatus(context: context, globals: globals) { try await body($0).rawValue }
  }

  /// As `run`, for a command whose status is not one of tokenbroker's own (`exec`: COMMAND's).
  private static func runStatus(
    context: ProcessContext, globals: GlobalOptions, _ body: (Runtime) async throws -> Int32
  ) async -> Int32 {
    let runtime = Runtime(context: context, globals: globals)
    do {
      return try await body(runtime)
    } catch {
      return report(error, context: context, verbose: globals.verbose)
    }
  }

  static func report(_ error: any Error, context: ProcessContext, verbose: Bool) -> Int32 {
    let mapped = ErrorMapping.map(error)
    if let usage = error as? UsageError {
      context.writeError("error: \(usage.message)\n\(usage.usage)\n")
    } else {
      context.say(mapped.message)
    }
    return mapped.status.rawValue
  }
}

/// Options every command accepts, anywhere before `--`: `--config FILE`, `--verbose`
/// (`CommandTable.globalOptions`, read by the scanner the front uses too).
struct GlobalOptions: Sendable {
  var configFile: String?
  var verbose = false

  static func extract(from args: inout [String]) throws -> GlobalOptions {
    let scan = GlobalOptionScan(args)
    if scan.missingConfigValue { throw UsageError("missing value for '--config'", usage: Help.topUsage) }
    args = scan.words
    return GlobalOptions(configFile: scan.configFile, verbose: scan.verbose)
  }
}
