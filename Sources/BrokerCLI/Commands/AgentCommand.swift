import BrokerBasics
import BrokerCore
import BrokerWire
import Glibc

/// `tokenbroker agent run | start | stop | status` (interface.md §3, §8): `run` serves in the
/// foreground (also under systemd socket activation), `start` spawns it detached and prints the
/// socket line for `eval`, `stop` asks it to exit, `status` exits 0 when one runs and 1 when not.
enum AgentCommand {
  static func run(_ args: [String], runtime: Runtime) async throws -> ExitStatus {
    let usage = Help.usage("agent")
    guard let sub = args.first else { throw UsageError("missing subcommand (run, start, stop, status)", usage: usage) }
    guard CommandTable.command("agent")?.form(sub) != nil else { throw UsageError("unknown subcommand 'agent \(sub)'", usage: usage) }
    let a = try Arguments(Array(args.dropFirst()), command: "agent", subcommand: sub)
    _ = try a.expectPositionals([])
    let endpoint = Self.endpoint(runtime)
    switch sub {
    case "run": return try await AgentRunCommand.run(runtime: runtime, endpoint: endpoint)
    case "start": return await start(runtime: runtime, endpoint: endpoint, json: a.flag("json"))
    case "stop": return await stop(runtime: runtime, endpoint: endpoint)
    case "status": return await status(runtime: runtime, endpoint: endpoint, json: a.flag("json"))
    default: throw UsageError("unknown subcommand 'agent \(sub)'", usage: usage)
    }
  }

  static func endpoint(_ runtime: Runtime) -> AgentEndpoint {
    var e = AgentEndpoint(environment: { runtime.context.environment[$0] }, uid: runtime.context.uid)
    e.socketPath = absolute(e.socketPath)
    e.directory = absolute(e.directory)
    return e
  }

  static func status(runtime: Runtime, endpoint: AgentEndpoint, json: Bool) async -> ExitStatus {
    let reply = await ask(.status, endpoint)
    if json {
      struct Doc: Encodable { var running: Bool; var pid: Int32?; var socket: String }
      runtime.context.writeOutput(JSONText.encode(Doc(running: reply != nil, pid: reply?.pid, socket: endpoint.socketPath)) + "\n")
    } else if let reply {
      runtime.context.writeOutput("agent running (pid \(reply.pid.map(String.init) ?? "?")) at \(endpoint.socketPath)\n")
    } else {
      runtime.context.writeOutput("no agent running at \(endpoint.socketPath)\n")
    }
    return reply == nil ? .failure : .success
  }

  static func start(runtime: Runtime, endpoint: AgentEndpoint, json: Bool) async -> ExitStatus {
    let reply: AgentReply
    do { reply = try await ensureRunning(runtime: runtime, endpoint: endpoint) } catch {
      runtime.context.say(error.description)
      return .failure
    }
    if json {
      struct Doc: Encodable { var socket: String; var pid: Int32? }
      runtime.context.writeOutput(JSONText.encode(Doc(socket: endpoint.socketPath, pid: reply.pid)) + "\n")
    } else {
      runtime.context.writeOutput(
        "TOKENBROKER_AGENT_SOCKET=\(shellQuoted(endpoint.socketPath)); export TOKENBROKER_AGENT_SOCKET;\n")
    }
    return .success
  }

  /// The running agent's `status` reply, after starting one when none answers.
  /// - Throws: `HelperError` (exit 1) saying why none could be started.
  static func ensureRunning(runtime: Runtime, endpoint: AgentEndpoint) async throws(HelperError) -> AgentReply {
    var reply = await ask(.status, endpoint)
    if reply == nil {
      if let problem = endpoint.prepareDirectory(uid: runtime.context.uid) {
        throw HelperError(status: .failure, description: problem)
      }
      var argv = [selfPath()]
      let file = explicitConfig(runtime)
      if !file.isEmpty { argv += ["--config", file] }
      guard AgentLauncher.spawn(executable: argv[0], arguments: argv + ["agent", "run"]) != nil else {
        let reason = Errno.current.description
        throw HelperError(status: .failure, description: "cannot start the agent (\(reason)); reinstall tokenbroker")
      }
      for _ in 0..<100 where reply == nil {
        try? await Task.sleep(for: .milliseconds(50))
        reply = await ask(.status, endpoint)
      }
    }
    guard let reply else {
      throw HelperError(status: .failure, description: "the agent did not start; run 'tokenbroker agent run --verbose' to see why")
    }
    return reply
  }

  static func stop(runtime: Runtime, endpoint: AgentEndpoint) async -> ExitStatus {
    // Stopped on purpose: the next agent exits for idleness again, until the next `forward`.
    unlink(endpoint.forwardKeepPath)
    let pid = lockHolder(endpoint.lockPath)
    // An agent holding the encrypted store's key answers once the refreshes under way have stored
    // their rotated tokens (`StoreKeyHolder.drop`).
    let holdsKey = (try? runtime.config().settings.store) == .encryptedFile
    let bound = holdsKey ? AgentHeldStore.dropBound : AgentCall.bound
    guard await AgentCall.send(AgentRequest(operation: .stop), to: endpoint.socketPath, bound: bound) != nil else {
      runtime.context.say("no agent was running at \(endpoint.socketPath)")
      return .success
    }
    // Wait (bounded) until it has answered its open requests and released its lock.
    for _ in 0..<200 {
      let fd = open(endpoint.lockPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
      if fd < 0 { break }
      let free = FileLock.attempt(fd, shared: true) == .locked
      close(fd)
      if free { break }
      try? await Task.sleep(for: .milliseconds(50))
    }
    // It releases the lock just before it exits: wait (bounded) until the process is gone too.
    if let pid {
      for _ in 0..<200 where isRunning(pid) { try? await Task.sleep(for: .milliseconds(25)) }
    }
    runtime.verbose("the agent at \(endpoint.socketPath) stopped")
    return .success
  }

  /// The pid the agent wrote into its lock file, if it can be read.
  static func lockHolder(_ lockPath: String) -> pid_t? {
    let fd = open(lockPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 24)
    let n = read(fd, &buffer, buffer.count)
    guard n > 0 else { return nil }
    let text = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").first.map(String.init)
    return text.flatMap { pid_t($0) }.flatMap { $0 > 0 ? $0 : nil }
  }

  /// Whether `pid` is alive and not a zombie (`/proc/PID/stat` state field).
  static func isRunning(_ pid: pid_t) -> Bool {
    let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 512)
    let n = read(fd, &buffer, buffer.count)
    guard n > 0, let paren = buffer[0..<n].lastIndex(of: UInt8(ascii: ")")), paren + 2 < n else { return false }
    return buffer[paren + 2] != UInt8(ascii: "Z") && buffer[paren + 2] != UInt8(ascii: "X")
  }

  static func ask(_ operation: AgentOperation, _ endpoint: AgentEndpoint) async -> AgentReply? {
    await AgentCall.send(AgentRequest(operation: operation), to: endpoint.socketPath)
  }

  /// The `--config` / `TOKENBROKER_CONFIG` file as an absolute path (against the working
  /// directory), or "" for the default files: the file an agent serves (`agent run`), is started
  /// with, and is asked for (`exec`); the front computes the same (FrontConfig).
  static func explicitConfig(_ runtime: Runtime) -> String {
    guard runtime.paths.configIsExplicit, let file = runtime.paths.configFiles.first else { return "" }
    return absolute(file)
  }

  /// `path` made absolute against the working directory (as it is when that cannot be read).
  static func absolute(_ path: String) -> String {
    guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
    defer { free(cwd) }
    return String(cString: cwd) + "/" + path
  }

  /// This executable (`/proc/self/exe`), to start the agent from.
  static func selfPath() -> String { ProcessContext.runningExecutable() ?? "tokenbroker-core" }

  static func shellQuoted(_ s: String) -> String {
    let plain = s.allSatisfy { $0.isLetter || $0.isNumber || "/._-+:@%".contains($0) }
    return plain ? s : "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
  }
}
