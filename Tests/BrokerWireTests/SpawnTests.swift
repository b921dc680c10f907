import BrokerWire
import CBrokerShims
import Glibc
import Testing

@Suite struct SpawnTests {
  /// The setsid flag every `posix_spawn` of a new session uses is glibc's, as spawn.h defines it.
  @Test func setsidFlagIsGlibcs() {
    #expect(Int32(Spawn.setsidFlag) == cbroker_posix_spawn_setsid_flag())
  }

  /// A child's streams are what was asked (a descriptor of ours, /dev/null, or ours as they are),
  /// `closesOthers` leaves it none of our other descriptors, and `wait` gives its exit code.
  @Test func streamsDescriptorsAndExitCode() throws {
    let dir = String(cString: mkdtemp(strdup("/tmp/tb-spawn-XXXXXX")))
    defer { _ = system("rm -rf '\(dir)'") }
    let held = open(dir + "/held", O_CREAT | O_WRONLY, 0o600)  // not close-on-exec
    defer { close(held) }
    let out = open(dir + "/out", O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
    defer { close(out) }
    let script = """
      printf '%s\\n' "$(readlink /proc/$$/fd/0)" "$(for f in /proc/$$/fd/*; do readlink "$f"; done | grep -c '/held$')" "$1"; exit 3
      """
    let spawn = Spawn(stdin: .null, stdout: .descriptor(out), stderr: .null, closesOthers: true)
    let pid = try spawn.start("/bin/sh", arguments: ["sh", "-c", script, "sh", "arg one"], environment: []).get()
    #expect(Spawn.wait(pid) == 3)
    let text = String(decoding: try #require(KeyFileReader.readFile(dir + "/out", limit: 4096)), as: UTF8.self)
    #expect(text == "/dev/null\n0\narg one\n")

    let kept = Spawn(stdout: .descriptor(out))
    let second = try kept.start("/bin/sh", arguments: ["sh", "-c", script], environment: nil).get()
    #expect(Spawn.wait(second) == 3)
    let both = String(decoding: try #require(KeyFileReader.readFile(dir + "/out", limit: 4096)), as: UTF8.self)
    #expect(both.hasSuffix("\n1\n\n"))  // without closesOthers the descriptor is inherited
  }

  /// A signal that killed the child is 128 + N; a program that is not there is posix_spawn's ENOENT;
  /// `searchesPath` finds a program on PATH.
  @Test func signalsMissingProgramsAndPath() throws {
    let pid = try Spawn().start("/bin/sh", arguments: ["sh", "-c", "kill -KILL $$"], environment: []).get()
    #expect(Spawn.wait(pid) == 128 + SIGKILL)
    #expect(Spawn().start("/nonexistent/program", arguments: ["x"], environment: []) == .failure(Spawn.Failure(code: ENOENT)))
    let found = try Spawn(searchesPath: true).start("true", arguments: ["true"], environment: nil).get()
    #expect(Spawn.wait(found) == 0)
  }

  /// `defaultSignals` empties the child's signal mask: a signal blocked in the spawning thread
  /// (the mask is per thread, so no other test sees it) is delivered in the child.
  @Test func defaultSignalsEmptyTheMask() throws {
    var hup = sigset_t()
    var previous = sigset_t()
    sigemptyset(&hup)
    sigaddset(&hup, SIGHUP)
    pthread_sigmask(SIG_BLOCK, &hup, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    let script = "kill -HUP $$; exit 0"
    let blocked = try Spawn().start("/bin/sh", arguments: ["sh", "-c", script], environment: []).get()
    #expect(Spawn.wait(blocked) == 0)
    let reset = try Spawn(defaultSignals: [SIGHUP]).start("/bin/sh", arguments: ["sh", "-c", script], environment: []).get()
    #expect(Spawn.wait(reset) == 128 + SIGHUP)
  }
}
