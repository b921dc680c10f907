import BrokerWire
import CBrokerShims
import Glibc
import Testing

@Suite struct AgentLauncherTests {
  /// The child runs in its own session, with /dev/null as its standard streams and none of this
  /// process's other descriptors, and without systemd's LISTEN_* variables.
  @Test func childIsDetachedAndHoldsNothingOfOurs() throws {
    let dir = String(cString: mkdtemp(strdup("/tmp/tb-launch-XXXXXX")))
    defer { _ = system("rm -rf '\(dir)'") }
    let report = dir + "/report"
    let held = open(dir + "/held", O_CREAT | O_WRONLY, 0o600)  // not close-on-exec: must not leak
    defer { close(held) }
    setenv("LISTEN_FDS", "1", 1)
    defer { unsetenv("LISTEN_FDS") }
    let script = """
      in=$(readlink /proc/$$/fd/0); out=$(readlink /proc/$$/fd/1); n=$(for f in /proc/$$/fd/*; do readlink "$f"; done | grep -c '/held$'); \
      sid=$(cut -d' ' -f6 /proc/$$/stat); listen=$(env | grep -c '^LISTEN_FDS='); \
      printf '%s\\n' "$in" "$out" "$n" "$sid" "$$" "$listen" > '\(report).tmp'; mv '\(report).tmp' '\(report)'
      """
    let pid = try #require(AgentLauncher.spawn(executable: "/bin/sh", arguments: ["sh", "-c", script]))
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    let text = String(decoding: try #require(KeyFileReader.readFile(report, limit: 4096)), as: UTF8.self)
    let lines = text.split(separator: "\n").map(String.init)
    #expect(lines.count == 6)
    #expect(lines[0] == "/dev/null")
    #expect(lines[1] == "/dev/null")
    // The descriptor this test holds is not inherited. (A count of all descriptors would also see
    // ones that tests running in parallel open between the listing and the spawn.)
    #expect(lines[2] == "0")
    #expect(lines[3] == lines[4])  // session id = its own pid: a new session
    #expect(lines[5] == "0")
  }
}
