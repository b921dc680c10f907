import BrokerBasics
import Glibc

/// Runs the full program in place of this process.
enum Core {
  /// `tokenbroker-core` relative to this executable: `<prefix>/libexec/tokenbroker/` beside
  /// `<prefix>/bin/` once installed, or the same directory in a build tree.
  static let path: String = {
    let dir = executableDirectory()
    let installed = dir + "/../libexec/tokenbroker/tokenbroker-core"
    if access(installed, X_OK) == 0 { return installed }
    return dir + "/tokenbroker-core"
  }()

  /// As `exec(replaying:)` for a call the agent did not serve; with `--verbose` or
  /// `TOKENBROKER_VERBOSE=1` it first says why (interface.md §3).
  static func exec(because why: StaticString, replaying input: StandardInput = StandardInput()) -> Never {
    let env = getenv("TOKENBROKER_VERBOSE")
    if CommandLine.arguments.contains("--verbose") || env.map({ strcmp($0, "1") == 0 }) == true {
      FileDescriptor.standardError.write("tokenbroker: the agent did not serve this call: \(why)\n")
    }
    exec(replaying: input)
  }

  /// Execs `tokenbroker-core` with this process's argv and environment; never returns.
  /// The argv is the one the kernel gave (`CommandLine.unsafeArgv`, `frontArgv`), byte for byte:
  /// `CommandLine.arguments` would replace bytes that are not UTF-8 with U+FFFD.
  /// - Parameter input: standard input already read (it is handed on through a pipe first).
  static func exec(replaying input: StandardInput = StandardInput()) -> Never {
    if input.started, let problem = input.replay() {
      FileDescriptor.error("tokenbroker: \(problem); try again, or set 'agent = off' in [broker]\n")
      exit(1)
    }
    execv(path, CommandLine.unsafeArgv)
    let reason = Errno.current.description
    FileDescriptor.error("tokenbroker: cannot run \(path) (\(reason)); reinstall tokenbroker (make install)\n")
    exit(1)
  }

  private static func executableDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
    guard n > 0 else { return "." }
    let path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return String(path[..<slash])
  }
}

/// Minimal unbuffered writes to a file descriptor.
struct FileDescriptor {
  let fd: Int32
  static let standardOutput = FileDescriptor(fd: 1)
  static let standardError = FileDescriptor(fd: 2)

  func write(_ text: String) { write(Array(text.utf8)) }

  /// An error line on stderr, and under a `docker-credential-*` name on stdout too: docker, podman
  /// and skopeo show only a helper's stdout (interface.md §5).
  static func error(_ line: String) {
    let argv0 = CommandLine.arguments.first ?? ""
    let name = argv0.utf8.lastIndex(of: UInt8(ascii: "/")).flatMap { String(argv0.utf8[argv0.utf8.index(after: $0)...]) } ?? argv0
    if name.hasPrefix("docker-credential-") { standardOutput.write(line) }
    standardError.write(line)
  }

  func write(_ bytes: [UInt8]) {
    _ = writeAll(fd, bytes)
  }
}
