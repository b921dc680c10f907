import BrokerBasics
import BrokerCore
import BrokerWire
import Dispatch
import Glibc

/// Runs `git config --global …` for `setup-git` (and `git config --get-regexp`, `git credential
/// reject` for `status` and `logout`): `git` found on `PATH`, started by `Spawn` with an argv
/// (never a shell) and nothing else of ours, stdin from /dev/null, stdout and stderr captured.
/// The blocking read and `waitpid` run on a Dispatch queue, not on Swift's cooperative pool.
struct GitConfig {
  /// The child's environment: the caller's (git needs `HOME`, `GIT_CONFIG_GLOBAL`, `XDG_CONFIG_HOME`).
  var environment: [String: String]

  /// Every value of `key` in the global config, in file order (empty when unset).
  /// - Throws: `HelperError` (exit 1) when git cannot run or reports an error other than "not set" (status 1).
  func values(_ key: String) async throws -> [String] {
    let r = try await spawn(["config", "--global", "--null", "--get-all", key])
    if r.status == 1 { return [] }
    guard r.status == 0 else { throw failure(["--get-all", key], r) }
    var values = r.stdout.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    if values.last == "" { values.removeLast() }  // the terminator of the last value
    return values
  }

  /// Runs `git config --global ARGS`.
  /// - Throws: `HelperError` (exit 1) naming the command and git's message when it exits other than 0.
  func run(_ args: [String]) async throws {
    let r = try await spawn(["config", "--global"] + args)
    guard r.status == 0 else { throw failure(args, r) }
  }

  /// Every `credential.helper` and `credential.<URL>.helper` value git reads here (system, global,
  /// local config of the working directory), in git's order, as (URL pattern or nil, value).
  /// - Throws: `HelperError` (exit 1) when git cannot run.
  func credentialHelperEntries() async throws -> [(pattern: String?, value: String)] {
    let r = try await spawn(["config", "--null", "--get-regexp", #"^credential\..*helper$"#])
    guard r.status == 0 else { return [] }  // 1: none set
    var out: [(String?, String)] = []
    for entry in r.stdout.split(separator: 0) {
      let text = String(decoding: entry, as: UTF8.self)
      let (key, value) = text.firstIndex(of: "\n").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) } ?? (text, "")
      guard key.hasPrefix("credential."), key.lowercased().hasSuffix(".helper") else { continue }
      let middle = key.dropFirst("credential.".count).dropLast(".helper".count)
      out.append((middle.isEmpty ? nil : String(middle.dropLast(middle.hasSuffix(".") ? 1 : 0)), value))
    }
    return out
  }

  /// Runs `git credential reject` with `fields` on stdin, so that every helper git asks for that
  /// URL forgets the credential (a caching helper in front of tokenbroker: bug-cases-3.md X14).
  /// - Returns: git's exit status.
  /// - Throws: `HelperError` (exit 1) when git cannot run.
  func reject(_ fields: [(String, String)]) async throws -> Int32 {
    let input = fields.map { "\($0.0)=\($0.1)\n" }.joined() + "\n"
    return try await spawn(["credential", "reject"], input: Array(input.utf8)).status
  }

  /// The command line as a user would type it, for `--dry-run`.
  static func display(_ args: [String]) -> String {
    (["git", "config", "--global"] + args).map(quote).joined(separator: " ")
  }

  static func quote(_ s: String) -> String {
    let plain = !s.isEmpty && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./:@=+,".contains($0)) }
    return plain ? s : "'" + s.replacingAll("'", with: "'\\''") + "'"
  }

  private func failure(_ args: [String], _ r: Outcome) -> HelperError {
    let message = TerminalText.clean(String(decoding: r.stderr, as: UTF8.self).trimmingWhitespace())
    return HelperError(
      status: .failure, description: "\(GitConfig.display(args)) failed (status \(r.status)\(message.isEmpty ? "" : ": " + message)); fix the global git config and run setup-git again"
    )
  }

  struct Outcome: Sendable {
    var status: Int32
    var stdout: [UInt8]
    var stderr: [UInt8]
  }

  private func spawn(_ args: [String], input: [UInt8]? = nil) async throws -> Outcome {
    let env = environment.map { "\($0.key)=\($0.value)" }
    return try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global().async {
        continuation.resume(with: Result { try GitConfig.spawnBlocking(["git"] + args, env: env, input: input) })
      }
    }
  }

  /// - Parameter input: written whole to the child's stdin (small: within a pipe's buffer), else
  ///   stdin is /dev/null.
  private static func spawnBlocking(_ argv: [String], env: [String], input: [UInt8]? = nil) throws -> Outcome {
    var inPipe: [Int32] = [-1, -1]
    if let input {
      guard input.count < 60_000, pipe(&inPipe) == 0 else {
        throw HelperError(status: .failure, description: "cannot create a pipe; try again")
      }
      _ = fcntl(inPipe[0], F_SETFD, FD_CLOEXEC)
      _ = fcntl(inPipe[1], F_SETFD, FD_CLOEXEC)
      _ = input.withUnsafeBytes { write(inPipe[1], $0.baseAddress, $0.count) }
      close(inPipe[1])
    }
    defer { if inPipe[0] >= 0 { close(inPipe[0]) } }
    var out: [Int32] = [-1, -1]
    var err: [Int32] = [-1, -1]
    guard pipe(&out) == 0 else { throw HelperError(status: .failure, description: "cannot create a pipe; try again") }
    guard pipe(&err) == 0 else {
      close(out[0]); close(out[1])
      throw HelperError(status: .failure, description: "cannot create a pipe; try again")
    }
    // The child gets the write ends as its fds 1 and 2 only (dup2 clears close-on-exec there).
    for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    let git = Spawn(
      stdin: inPipe[0] >= 0 ? .descriptor(inPipe[0]) : .null, stdout: .descriptor(out[1]), stderr: .descriptor(err[1]),
      closesOthers: true, searchesPath: true)
    let started = git.start(argv[0], arguments: argv, environment: env)
    close(out[1])
    close(err[1])
    defer { close(out[0]); close(err[0]) }
    let pid: pid_t
    switch started {
    case .success(let child): pid = child
    case .failure(let failure):
      throw HelperError(
        status: .failure, description: "cannot run git (\(Errno(failure.code).description)); install git or put it on PATH")
    }
    let stdout = readAll(fd: out[0], limit: 1 << 20) ?? []
    let stderr = readAll(fd: err[0], limit: 1 << 20) ?? []
    return Outcome(status: Spawn.wait(pid) ?? 1, stdout: stdout, stderr: stderr)
  }
}

extension String {
  /// Every occurrence of `target` replaced by `replacement`.
  func replacingAll(_ target: Character, with replacement: String) -> String {
    var s = ""
    for c in self { if c == target { s += replacement } else { s.append(c) } }
    return s
  }
}
