import BrokerBasics
import BrokerCore
import BrokerWire
import Glibc

/// Starts the user's browser on the authorization URL, detached (bug-cases.md B24, B25).
///
/// The child gets `/dev/null` as stdin, stdout and stderr (nothing it prints can reach our
/// protocol output), its own session (`POSIX_SPAWN_SETSID`: no terminal signals, no controlling
/// terminal), default signal handling and an empty signal mask. It is never waited for: it may
/// exit non-zero, keep running, or fork a browser that lives on. Only the URL, which carries no
/// secret, is passed on its command line.
public enum BrowserLauncher {
  /// The commands to try, in order (interface.md §2): `browser` from the config, else
  /// `TOKENBROKER_BROWSER`, else each entry of `$BROWSER` (a colon-separated list, as xdg-utils
  /// reads it), else `xdg-open`. Each command is split on white space (no shell); an argument
  /// `%s` is replaced by the URL, otherwise the URL is appended as the last argument.
  public static func candidates(configured: String?, environment: [String: String]) -> [[String]] {
    func words(_ s: String) -> [String] { s.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) }
    for explicit in [configured, environment["TOKENBROKER_BROWSER"]] {
      if let explicit, !words(explicit).isEmpty { return [words(explicit)] }
    }
    let fromEnvironment = (environment["BROWSER"] ?? "").split(separator: ":").map { words(String($0)) }
      .filter { !$0.isEmpty }
    return fromEnvironment + [["xdg-open"]]
  }

  /// The argument vector for `command` and `url`.
  public static func arguments(_ command: [String], url: String) -> [String] {
    command.contains("%s") ? command.map { $0 == "%s" ? url : $0 } : command + [url]
  }

  /// Starts the first candidate that can be executed (`posix_spawnp`, searching `PATH`), on a
  /// dedicated thread (an exec can be slow).
  /// - Parameter environment: the child's environment (the caller's; it holds no secret).
  /// - Returns: the program that was started, for messages.
  /// - Throws: `SystemError.call` naming the last program tried when none could be started.
  public static func open(url: String, candidates: [[String]], environment: [String: String]) async throws -> String {
    try await DedicatedThread.run { try openNow(url: url, candidates: candidates, environment: environment) }
  }

  static func openNow(url: String, candidates: [[String]], environment: [String: String]) throws(SystemError) -> String {
    var lastError = SystemError.call(what: "start a browser", path: "xdg-open", reason: "no command")
    for command in candidates where !command.isEmpty {
      let rc = spawn(arguments(command, url: url), environment: environment)
      if rc == 0 { return command[0] }
      lastError = .call(what: "start the browser", path: command[0], reason: Errno(rc).description)
    }
    throw lastError
  }

  /// `argv` started detached as described above (`Spawn.detached`, `PATH` searched).
  /// - Returns: 0 or an errno value.
  static func spawn(_ argv: [String], environment: [String: String]) -> Int32 {
    var detached = Spawn.detached
    detached.searchesPath = true
    let env = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    switch detached.start(argv[0], arguments: argv, environment: env) {
    case .success: return 0
    case .failure(let failure): return failure.code
    }
  }
}
