@testable import BrokerCLI
import BrokerCore
import BrokerSystem
import Synchronization
import Testing

/// How `exec` serves while COMMAND runs; the process side runs in Tests/Integration/test_exec.py.
struct ExecCommandTests {
  /// A failing endpoint server is named on stderr in one line; COMMAND runs on and its status is
  /// exec's (the error is not dropped with the task group's child).
  @Test func anEndpointThatFailsIsNamedAndCommandRunsOn() async throws {
    let stderr = Mutex("")
    let context = ProcessContext(
      environment: ["PATH": "/usr/bin:/bin"], uid: 0, readInput: { _ in [] }, writeOutput: { _ in },
      writeError: { s in stderr.withLock { $0 += s } }, isInteractive: false)
    let failing = ExecCommand.Endpoint(
      name: "Azure managed identity",
      serve: {
        throw SystemError.listener(what: "the SDK credential endpoint failed (Bad file descriptor)", remedy: "run the command again")
      }, stop: {})
    let status = try await ExecCommand.serve(
      [failing], command: ["sh", "-c", "exit 7"], environment: [Array("PATH=/usr/bin:/bin".utf8)],
      runtime: Runtime(context: context, globals: GlobalOptions()))
    #expect(status == 7)
    #expect(stderr.withLock { $0 } == "tokenbroker: the SDK credential endpoint failed (Bad file descriptor); run the command again\n")
  }
}
