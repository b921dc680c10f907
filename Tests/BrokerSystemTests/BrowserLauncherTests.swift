import BrokerSystem
import Foundation
import Testing

/// The detached browser launch (bug-cases.md B24, B25).
@Suite(.serialized) struct BrowserLauncherTests {
  @Test func candidatesFollowTheDocumentedOrder() {
    let env = ["TOKENBROKER_BROWSER": "tb-browser --x", "BROWSER": "firefox:chromium --new-window"]
    #expect(BrowserLauncher.candidates(configured: "conf-browser -a", environment: env) == [["conf-browser", "-a"]])
    #expect(BrowserLauncher.candidates(configured: nil, environment: env) == [["tb-browser", "--x"]])
    #expect(
      BrowserLauncher.candidates(configured: nil, environment: ["BROWSER": "firefox:chromium --new-window"])
        == [["firefox"], ["chromium", "--new-window"], ["xdg-open"]])
    #expect(BrowserLauncher.candidates(configured: "  ", environment: [:]) == [["xdg-open"]])
  }

  @Test func theURLIsTheLastArgumentOrReplacesPercentS() {
    #expect(BrowserLauncher.arguments(["b", "-a"], url: "https://u") == ["b", "-a", "https://u"])
    #expect(BrowserLauncher.arguments(["b", "%s", "-z"], url: "https://u") == ["b", "https://u", "-z"])
  }

  @Test func theChildIsDetachedWithNullStreamsAndNotWaitedFor() async throws {
    let dir = NSTemporaryDirectory() + "tb-launch-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let script = dir + "/browser.sh"
    let report = dir + "/report"
    try """
      #!/bin/sh
      o=$(readlink /proc/$$/fd/1); e=$(readlink /proc/$$/fd/2)
      { echo "arg=$1"; for f in /proc/$$/fd/*; do echo "fd $(readlink $f)"; done
        echo "in=$(readlink /proc/$$/fd/0)"; echo "out=$o"; echo "err=$e"
        echo "sid=$(ps -o sid= -p $$ | tr -d ' ')"; echo "pid=$$"
        echo "secret=${TB_TEST_SECRET-none}"; } > "\(report).tmp" 2>/dev/null
      mv "\(report).tmp" "\(report)"
      exec sleep 30
      """.write(toFile: script, atomically: true, encoding: .utf8)
    chmod(script, 0o755)
    // A descriptor of ours without close-on-exec: the child must not get it.
    let leak = open("/dev/zero", O_RDONLY)
    defer { close(leak) }
    let started = Date()
    let program = try await BrowserLauncher.open(
      url: "https://idp.example.test/authorize?state=S", candidates: [["/bin/sh", script]],
      environment: ["PATH": "/usr/bin:/bin"])
    #expect(program == "/bin/sh")  // not the fresh script itself: a spawn elsewhere may hold it open (ETXTBSY)
    #expect(Date().timeIntervalSince(started) < 5)  // the child sleeps 30 s: never waited for
    var text = ""
    for _ in 0..<100 where text.isEmpty {
      text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
      if text.isEmpty { usleep(50_000) }
    }
    let lines = text.split(separator: "\n").map(String.init)
    #expect(lines.first == "arg=https://idp.example.test/authorize?state=S")
    #expect(lines.contains("in=/dev/null"))
    #expect(lines.contains("out=/dev/null"))
    #expect(lines.contains("err=/dev/null"))
    #expect(!text.contains("/dev/zero"))
    #expect(!text.contains("socket:"))
    let pid = lines.first { $0.hasPrefix("pid=") }.map { String($0.dropFirst(4)) }
    #expect(lines.contains("sid=\(pid ?? "?")"))  // its own session
    #expect(lines.contains("secret=none"))
    if let pid, let n = Int32(pid) { kill(n, SIGKILL) }
  }

  @Test func aMissingProgramIsAnErrorAndTheNextCandidateIsTried() async throws {
    let error = await #expect(throws: SystemError.self) {
      try await BrowserLauncher.open(url: "https://u", candidates: [["/nonexistent/browser"]], environment: [:])
    }
    #expect("\(error!)".contains("/nonexistent/browser"))
    let program = try await BrowserLauncher.open(
      url: "https://u", candidates: [["/nonexistent/browser"], ["/bin/true"]], environment: [:])
    #expect(program == "/bin/true")
  }
}
