import BrokerWire
import Glibc
import Testing

@Suite struct AgentEndpointTests {
  private func endpoint(_ env: [String: String], uid: UInt32 = 1000) -> AgentEndpoint {
    AgentEndpoint(environment: { env[$0] }, uid: uid)
  }

  @Test func socketPathFollowsInterfaceSection2() {
    let xdg = endpoint(["XDG_RUNTIME_DIR": "/run/user/1000"])
    #expect(xdg.socketPath == "/run/user/1000/tokenbroker/agent.sock")
    #expect(xdg.isInRuntimeDirectory)
    #expect(xdg.lockPath == "/run/user/1000/tokenbroker/agent.sock.lock")
    let fallback = endpoint([:], uid: 1234)
    #expect(fallback.socketPath == "/tmp/tokenbroker-1234/agent.sock")
    #expect(endpoint(["XDG_RUNTIME_DIR": "relative"], uid: 7).runtimeDirectory == "/tmp/tokenbroker-7")
    let explicit = endpoint(["TOKENBROKER_AGENT_SOCKET": "/srv/s/a.sock", "XDG_RUNTIME_DIR": "/run/user/1"])
    #expect(explicit.socketPath == "/srv/s/a.sock")
    #expect(explicit.directory == "/srv/s")
    #expect(!explicit.isInRuntimeDirectory)
  }

  /// Y16: a scheduled job (cron without pam_systemd) has no XDG_RUNTIME_DIR; it must find the
  /// agent of the user's session in `/run/user/$UID` when that is the user's private directory,
  /// not start a second agent without a keyring in `/tmp`.
  @Test func Y16_withoutXDGRuntimeDirTheUsersPrivateRunUserDirectoryIsUsed() throws {
    let root = "/tmp/tb-run-user-\(getpid())"
    mkdir(root, 0o755)
    defer {
      for uid in ["\(getuid())", "4242"] { rmdir(root + "/" + uid) }
      rmdir(root)
    }
    let uid = getuid()
    func found(_ env: [String: String] = [:], uid: UInt32 = getuid()) -> AgentEndpoint {
      AgentEndpoint(environment: { env[$0] }, uid: uid, userRuntimeRoot: root)
    }
    // No /run/user/$UID: the /tmp fallback.
    #expect(found().runtimeDirectory == "/tmp/tokenbroker-\(uid)")
    #expect(AgentEndpoint.runtimeDirectory(environment: { _ in nil }, uid: uid, userRuntimeRoot: root).isFallback)
    // The user's own 0700 directory: used, and the socket's directory is the runtime directory.
    #expect(mkdir(root + "/\(uid)", 0o700) == 0)
    #expect(found().socketPath == root + "/\(uid)/tokenbroker/agent.sock")
    #expect(found().isInRuntimeDirectory)
    #expect(!AgentEndpoint.runtimeDirectory(environment: { _ in nil }, uid: uid, userRuntimeRoot: root).isFallback)
    // XDG_RUNTIME_DIR still wins.
    #expect(found(["XDG_RUNTIME_DIR": "/x"]).runtimeDirectory == "/x/tokenbroker")
    // Open to others, or another user's: not taken.
    chmod(root + "/\(uid)", 0o755)
    #expect(found().runtimeDirectory == "/tmp/tokenbroker-\(uid)")
    #expect(mkdir(root + "/4242", 0o700) == 0)
    #expect(found(uid: 4242).runtimeDirectory == "/tmp/tokenbroker-4242")
  }

  /// The forwarding socket lies beside the agent's; a socket named `…forward.sock` is a
  /// forwarded agent's (interface.md §8), whatever its directory.
  @Test func forwardingSocketAndForwardedSockets() {
    let xdg = endpoint(["XDG_RUNTIME_DIR": "/run/user/1000"])
    #expect(xdg.forwardSocketPath == "/run/user/1000/tokenbroker/forward.sock")
    #expect(!xdg.isForwarded)
    #expect(endpoint(["TOKENBROKER_AGENT_SOCKET": "/srv/s/a.sock"]).forwardSocketPath == "/srv/s/forward.sock")
    #expect(endpoint(["TOKENBROKER_AGENT_SOCKET": "/a.sock"]).forwardSocketPath == "/forward.sock")
    for forwarded in ["/tmp/tokenbroker-bob-forward.sock", "/run/tokenbroker/forward.sock", "forward.sock"] {
      #expect(endpoint(["TOKENBROKER_AGENT_SOCKET": forwarded]).isForwarded, "\(forwarded)")
    }
    for local in ["/tmp/forward.sock.d/agent.sock", "/tmp/forward.socket", "/tmp/x.sock"] {
      #expect(!endpoint(["TOKENBROKER_AGENT_SOCKET": local]).isForwarded, "\(local)")
    }
  }

  private func tempDir() -> String { String(cString: mkdtemp(strdup("/tmp/tb-ep-XXXXXX"))) }

  @Test func runtimeDirectoryIsCreated0700AndMustStaySo() {
    let base = tempDir()
    defer { _ = system("rm -rf '\(base)'") }
    let e = endpoint(["XDG_RUNTIME_DIR": base], uid: getuid())
    #expect(e.prepareDirectory() == nil)
    var st = stat()
    #expect(stat(e.directory, &st) == 0 && st.st_mode & 0o777 == 0o700)
    chmod(e.directory, 0o750)
    #expect(e.prepareDirectory()?.contains("mode 750 lets others in") == true)
    #expect(e.prepareDirectory()?.contains("chmod 0700") == true)
    chmod(e.directory, 0o700)
    #expect(e.prepareDirectory(uid: getuid() + 1)?.contains("owned by uid") == true)
  }

  @Test func explicitDirectoryMayBeReadableButNotWritableByOthers() {
    let base = tempDir()
    defer { _ = system("rm -rf '\(base)'") }
    chmod(base, 0o755)
    let e = endpoint(["TOKENBROKER_AGENT_SOCKET": base + "/a.sock"], uid: getuid())
    #expect(e.prepareDirectory() == nil)
    chmod(base, 0o777)
    #expect(e.prepareDirectory()?.contains("lets others in") == true)
    #expect(endpoint(["TOKENBROKER_AGENT_SOCKET": base + "/missing/a.sock"], uid: getuid()).prepareDirectory() != nil)
  }
}
