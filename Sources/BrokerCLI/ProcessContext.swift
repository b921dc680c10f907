import BrokerBasics
import BrokerAgent
import BrokerCore
import Glibc

/// The outside world of one command: arguments, environment, standard streams. Injected so
/// BrokerCLITests run commands in-process; `live` is the real process.
public struct ProcessContext: Sendable {
  public var environment: [String: String]
  public var uid: UInt32
  /// Reads all of standard input, up to `limit` bytes (nil: more was offered).
  public var readInput: @Sendable (_ limit: Int) -> [UInt8]?
  public var writeOutput: @Sendable (String) -> Void
  public var writeError: @Sendable (String) -> Void
  /// True when standard input and standard error are terminals (only `login` may then prompt).
  public var isInteractive: Bool
  /// True when standard input is a terminal: a person typing, not git or docker, so a helper
  /// action says what it reads, and `readInput` ends at an empty line as well as at end of file.
  public var inputIsTerminal = false
  /// This is the running process (`live`): its argv and `environ` are the command's, so `exec`
  /// may hand their bytes to COMMAND as they came (`environment` and the parsed arguments are
  /// decoded, every byte that is not UTF-8 replaced). False in tests and in the agent.
  public var isLive = false
  /// What the agent gives a command it runs; nil in every other process (tokenbroker-core, exec).
  var agent: AgentSide? = nil
  /// This program's file, absolute (`/proc/self/exe`) in `live`; nil in tests unless they set it.
  public var executable: String? = nil

  public init(
    environment: [String: String], uid: UInt32, readInput: @escaping @Sendable (Int) -> [UInt8]?,
    writeOutput: @escaping @Sendable (String) -> Void, writeError: @escaping @Sendable (String) -> Void,
    isInteractive: Bool
  ) {
    self.environment = environment
    self.uid = uid
    self.readInput = readInput
    self.writeOutput = writeOutput
    self.writeError = writeError
    self.isInteractive = isInteractive
  }

  /// The running process.
  public static var live: ProcessContext {
    var env: [String: String] = [:]
    var p = environ
    while let entry = p.pointee {
      let s = String(cString: entry)
      if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
      p += 1
    }
    let terminal = isatty(0) == 1
    var context = ProcessContext(
      environment: env, uid: getuid(), readInput: { readAll(fd: 0, limit: $0, endsAtEmptyLine: terminal) },
      writeOutput: { writeAll(fd: 1, $0) }, writeError: { writeAll(fd: 2, $0) },
      isInteractive: terminal && isatty(2) == 1)
    context.inputIsTerminal = terminal
    context.isLive = true
    context.executable = runningExecutable()
    return context
  }

  /// The running program's file (`/proc/self/exe`, proc(5)), or nil when it cannot be read.
  static func runningExecutable() -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
    return n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
  }

  /// Writes one message line `tokenbroker: <text>` to standard error.
  public func say(_ text: String) { writeError("tokenbroker: " + text + "\n") }
}

/// Reads `fd` to end of file, up to `limit` bytes (nil: more was offered). With
/// `endsAtEmptyLine` (a terminal, which hands over one line per `read`) an empty line ends the
/// input too, as it ends a request in git's credential protocol (git-credential(1), "INPUT/OUTPUT
/// FORMAT").
func readAll(fd: Int32, limit: Int, endsAtEmptyLine: Bool = false) -> [UInt8]? {
  var out: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65536)
  while true {
    let n = retryingOnInterrupt { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
    if n <= 0 { break }
    out.append(contentsOf: chunk[0..<n])
    if out.count > limit { return nil }
    if endsAtEmptyLine && (out == [0x0A] || out.suffix(2) == [0x0A, 0x0A]) { break }
  }
  return out
}

func writeAll(fd: Int32, _ text: String) {
  _ = BrokerBasics.writeAll(fd, Array(text.utf8))
}
