// The small front: one static executable (nothing loaded at start), so git, curl and build tools
// that call it hundreds of times pay about what `git credential-cache get` does. The hot paths
// (git and docker helper actions, `token get`) go to the resident agent: a warm call is one
// `connect` and one exchange, with no config read and no file touched; the agent answers "not
// served" for a caller whose config says `[broker] agent = off` or names another file. Only when no
// agent listens does the front read `[broker] agent` and start one. Everything else, and every call
// the agent cannot serve, runs in the full program, `tokenbroker-core`, by exec (same pid, same
// argv: the program acts on the name it was started under, e.g. git-credential-tokenbroker).
import BrokerWire
import Glibc

Front.run()

/// The front's one flow, in a function: top-level code is MainActor-isolated in Swift 6, and a
/// closure formed there checks its executor when called, which starts the concurrency runtime's
/// default executors (code and data pages the front otherwise never touches).
enum Front {
  static func run() -> Never {
    let arguments = CommandLine.arguments
    guard let route = AgentRoute.classify(arguments) else { Core.exec() }
    // `token get --wait SECONDS` may wait that long for a sign-in before the agent answers.
    let replyBound = AgentProtocol.replyBound + route.waitSeconds * 1000
    let endpoint = AgentEndpoint.current
    // A forwarded agent's socket (interface.md §8): only its agent may answer, whoever asks.
    let forwarded = endpoint.isForwarded
    // A person at a terminal, not git or docker: the full program says what it reads.
    if route.readsInput && isatty(0) == 1 && !forwarded { Core.exec(because: "standard input is a terminal") }
    let configFile = FrontConfig.file(route: route)

    // Connected first, stdin read after: without an agent (`agent = off`) the full program reads
    // standard input itself, with no pipe to hand it on.
    guard
      let fd = forwarded
        ? ForwardedAgent.connect(endpoint)
        : AgentStarter.connect(endpoint, mayStart: { route.configFile == nil && FrontConfig.agentEnabled(file: configFile) })
    else { Core.exec(because: "no agent runs, and agent = off or it could not be started") }

    var input = StandardInput()
    if route.readsInput { input.read() }
    let bus = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) } ?? ""
    // Straight from getenv: no Dictionary of the caller's variables (AgentRequest.encodedRun).
    let request = try? AgentRequest.encodedRun(
      name: route.name, arguments: route.arguments, config: configFile, input: input.bytes, bus: bus,
      environment: { getenv($0).map { String(cString: $0) } })
    guard input.complete, let bytes = request else {
      close(fd)
      Core.exec(because: "the request is too large for the agent", replaying: input)
    }


    switch AgentClient.exchange(fd: fd, request: bytes, timeoutMilliseconds: replyBound) {
    case .reply(let raw):
      guard let reply = try? AgentReply.decode(raw), reply.exit != AgentProtocol.notServed else {
        Core.exec(because: "it declined (agent = off, another config or another login session)", replaying: input)
      }
      ignoreClosedReaders()
      FileDescriptor.standardOutput.write(reply.output)
      FileDescriptor.standardError.write(reply.error)
      exit(reply.exit)
    case .closed, .failed:
      if forwarded {
        ForwardedAgent.fail(endpoint, "closed the connection without answering (it serves only its own user; a forward that ended does so too)")
      }
      // The agent stopped or died before answering: nothing was handed out, the full program serves it.
      close(fd)
      Core.exec(because: "it ended before answering", replaying: input)
    case .timedOut:
      if forwarded { ForwardedAgent.fail(endpoint, "did not answer within \(replyBound / 1000) s") }
      ignoreClosedReaders()
      FileDescriptor.error(
        "tokenbroker: the agent did not answer within \(replyBound / 1000) s; run 'tokenbroker agent stop' and try again\n")
      exit(4)
    }
  }

  /// Ends the call as tokenbroker-core ends it when stdout or stderr is a pipe nobody reads any
  /// more (`| head -c0`, a caller that stopped reading): the output is lost, the exit status is
  /// the command's. The core's writes get EPIPE there, not SIGPIPE (GLib, which it loads for the
  /// keyring, ignores SIGPIPE), and `FileDescriptor.write` stops at EPIPE. Set only once the
  /// front will exec nothing: exec would hand the ignored disposition on to the core.
  private static func ignoreClosedReaders() { signal(SIGPIPE, SIG_IGN) }
}
