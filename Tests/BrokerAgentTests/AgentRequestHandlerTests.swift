import BrokerAgent
@testable import BrokerCLI
import BrokerTestSupport
import BrokerWire
import Foundation
import Glibc
import Synchronization
import Testing

/// The agent's answers, in-process: what it runs, what it refuses to run (`notServed`), its own
/// operations.
@Suite struct AgentRequestHandlerTests {
  let h: ConfigHome
  let handler: AgentRequestHandler
  let stopped = Stops()

  init() throws {
    h = try ConfigHome(config: fileStoreConfig)
    let environment = h.environment
    let stopped = self.stopped
    handler = requestHandler(cache: TokenCache(time: FakeTime()), environment: environment, stop: { stopped.add($0) })
  }

  private func run(_ name: String, _ args: [String], input: String = "", config: String = "") async -> AgentReply {
    await handler.handle(.run(name: name, arguments: args, config: config, input: Array(input.utf8)))
  }

  @Test func runsHotPathCommandsAsTheFullProgramWould() async {
    let capability = await run("tokenbroker", ["capability"])
    #expect(capability.exit == 0)
    #expect(capability.output == Array("version 0\ncapability authtype\n".utf8))
    let unmatched = await run("git-credential-tokenbroker", ["get"], input: "protocol=https\nhost=github.com\n\n")
    #expect(unmatched == AgentReply(exit: 0))
    let malformed = await run("tokenbroker", ["get"], input: "protocol=https\n\n")
    #expect(malformed.exit == 1)
    #expect(malformed.output.isEmpty)
    #expect(String(decoding: malformed.error, as: UTF8.self).hasPrefix("tokenbroker: "))
    let usage = await run("tokenbroker", ["token", "get", "work", "--format", "yaml"])
    #expect(usage.exit == 64)
  }

  @Test func refusesWhatItMustNotRun() async {
    for (name, args) in [
      ("tokenbroker", ["login", "work"]), ("tokenbroker", ["logout", "work"]), ("tokenbroker", ["agent", "stop"]),
      ("tokenbroker", ["--config", "/etc/other", "get"]), ("tokenbroker", ["token", "get", "work", "--help"]),
      ("git-credential-tokenbroker", ["frobnicate"]),
    ] {
      #expect(await run(name, args) == .notServed, "\(name) \(args)")
    }
    #expect(await run("tokenbroker", ["capability"], config: "/etc/other-config") == .notServed)
  }

  /// A caller whose HOME or XDG_* variables name other files than the agent's reads another
  /// config: the full program serves it. Variables it does not set are the agent's.
  @Test func aCallerOfOtherFilesIsNotServed() async {
    for environment in [["HOME": "/home/other"], ["XDG_CONFIG_HOME": "/other"], ["XDG_DATA_HOME": "/other"]] {
      let request = AgentRequest.run(name: "tokenbroker", arguments: ["capability"], config: "", input: [], environment: environment)
      #expect(await handler.handle(request) == .notServed, "\(environment)")
    }
    let same = ["HOME": h.directory, "XDG_CONFIG_HOME": h.directory + "/config"]
    let request = AgentRequest.run(name: "tokenbroker", arguments: ["capability"], config: "", input: [], environment: same)
    #expect(await handler.handle(request).exit == 0)
  }

  /// The front sends every hot-path call to a running agent without reading the config: the
  /// agent itself leaves a caller whose config says `agent = off`, or whose config does not load,
  /// to the full program.
  @Test func agentOffOrABrokenConfigIsNotServed() async throws {
    #expect(await run("tokenbroker", ["capability"]).exit == 0)
    let file = h.directory + "/config/tokenbroker/config"
    try (fileStoreConfig.replacingOccurrences(of: "store = file", with: "store = file\nagent = off"))
      .write(toFile: file, atomically: true, encoding: .utf8)
    #expect(await run("tokenbroker", ["capability"]) == .notServed)
    try "[broker]\nagent = sometimes\n".write(toFile: file, atomically: true, encoding: .utf8)
    #expect(await run("tokenbroker", ["capability"]) == .notServed)
    try fileStoreConfig.write(toFile: file, atomically: true, encoding: .utf8)
    #expect(await run("tokenbroker", ["capability"]).exit == 0)
  }

  @Test func ownOperations() async {
    let status = await handler.handle(AgentRequest(operation: .status))
    #expect(status.exit == 0)
    #expect(status.pid == getpid())
    #expect(status.programVersion == BrokerCommand.version)
    #expect(await handler.handle(AgentRequest(operation: .drop, account: "work")) == AgentReply(exit: 0))
    #expect(stopped.reasons.isEmpty)
    #expect(await handler.handle(AgentRequest(operation: .stop)) == AgentReply(exit: 0))
    #expect(stopped.reasons == ["'tokenbroker agent stop' asked"])
  }
  /// A caller of another D-Bus session is left to the full program, and the agent stops saying
  /// why; a caller without a bus (cron) is served with the agent's.
  @Test func aCallerOfAnotherSessionStopsTheAgentWithAReason() async {
    let other = await handler.handle(
      .run(name: "tokenbroker", arguments: ["capability"], config: "", input: [], bus: "unix:path=/elsewhere/bus"))
    #expect(other.exit == AgentProtocol.notServed)
    #expect(stopped.reasons.count == 1)
    #expect(stopped.reasons.first?.contains("another D-Bus session") == true)
    #expect(await run("tokenbroker", ["capability"]).exit == 0)
    #expect(stopped.reasons.count == 1)
  }
}

/// The reasons given to the handler's `stop`, in order.
final class Stops: Sendable {
  private let said = Mutex<[String]>([])
  var reasons: [String] { said.withLock { $0 } }
  func add(_ why: String) { said.withLock { $0.append(why) } }
}
