import BrokerSystem
import Glibc
import Testing

/// Pasted lines on a terminal, read on a dedicated thread (here through a pipe).
@Suite struct TerminalLinesTests {
  @Test func returnsTheFirstAcceptedLine() async throws {
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }  // no child another test spawns holds an end
    defer { close(fds[0]) }
    let lines = try TerminalLines(fd: fds[0])
    let text = "  \nnot this\r\n  http://localhost:1/?code=A  \nlater\n"
    _ = text.withCString { write(fds[1], $0, strlen($0)) }
    close(fds[1])
    let got = try await lines.read { line in line.hasPrefix("http") ? line : nil }
    #expect(got == "http://localhost:1/?code=A")
  }

  @Test func stopEndsTheWaitEvenAfterEndOfInput() async throws {
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }  // no child another test spawns holds an end
    defer { close(fds[0]) }
    close(fds[1])
    let lines = try TerminalLines(fd: fds[0])
    let reading = Task { try await lines.read { $0 } }
    try await Task.sleep(for: .milliseconds(100))
    reading.cancel()
    await #expect(throws: CancellationError.self) { try await reading.value }
  }
}
