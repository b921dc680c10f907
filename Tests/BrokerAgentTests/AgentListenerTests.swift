import BrokerAgent
import BrokerCore
import BrokerWire
import Glibc
import Testing

@Suite struct AgentListenerTests {
  @Test func bindsMode0600InA0700DirectoryAndUnlinksOnClose() throws {
    let dir = TempDirectory()
    defer { dir.remove() }
    let e = endpoint(in: dir.path)
    let listener = try AgentListener.open(endpoint: e, environment: [:])
    var st = stat()
    #expect(stat(e.socketPath, &st) == 0 && st.st_mode & 0o777 == 0o600)
    #expect(stat(e.directory, &st) == 0 && st.st_mode & 0o777 == 0o700)
    let pid = KeyFileReader.readFile(e.lockPath, limit: 64).map { String(decoding: $0, as: UTF8.self) }
    #expect(pid == "\(getpid())\n")
    listener.close()
    #expect(access(e.socketPath, F_OK) != 0)
  }

  /// The forwarding socket: beside the agent's, 0600, one agent's at a time, removed on close.
  @Test func forwardingSocketBesideTheAgentsOneAgentEach() throws {
    let dir = TempDirectory()
    defer { dir.remove() }
    let e = endpoint(in: dir.path)
    let main = try AgentListener.open(endpoint: e, environment: [:])
    defer { main.close() }
    let forwarding = try AgentListener.openForwarding(endpoint: e, environment: [:])
    #expect(forwarding.socketPath == e.directory + "/forward.sock")
    var st = stat()
    #expect(stat(forwarding.socketPath, &st) == 0 && st.st_mode & 0o777 == 0o600)
    #expect(throws: AgentSetupError.alreadyRunning(socket: forwarding.socketPath)) {
      try AgentListener.openForwarding(endpoint: e, environment: [:])
    }
    forwarding.close()
    #expect(access(forwarding.socketPath, F_OK) != 0)
  }

  @Test func oneAgentPerSocket() throws {
    let dir = TempDirectory()
    defer { dir.remove() }
    let e = endpoint(in: dir.path)
    let first = try AgentListener.open(endpoint: e, environment: [:])
    defer { first.close() }
    #expect(throws: AgentSetupError.alreadyRunning(socket: e.socketPath)) {
      try AgentListener.open(endpoint: e, environment: [:], lockWait: 0.1)
    }
    // The first one still serves its socket: the second did not remove it.
    guard case .connected(let fd) = AgentClient.connect(to: e.socketPath) else {
      Issue.record("the first agent's socket is gone")
      return
    }
    close(fd)
  }

  @Test func staleSocketIsReplacedUnderTheLock() throws {
    let dir = TempDirectory()
    defer { dir.remove() }
    let e = endpoint(in: dir.path)
    #expect(e.prepareDirectory() == nil)
    // What a killed agent leaves: the socket file, with nobody listening.
    #expect(system("python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"\(e.socketPath)\")'") == 0)
    #expect(AgentClient.connect(to: e.socketPath) == .absent)
    let listener = try AgentListener.open(endpoint: e, environment: [:])
    defer { listener.close() }
    guard case .connected(let fd) = AgentClient.connect(to: e.socketPath) else {
      Issue.record("no agent at the socket")
      return
    }
    close(fd)
  }

  @Test func refusesAnUnsafeRuntimeDirectory() throws {
    let dir = TempDirectory()
    defer { dir.remove() }
    let e = endpoint(in: dir.path)
    mkdir(e.directory, 0o755)
    chmod(e.directory, 0o755)
    do {
      _ = try AgentListener.open(endpoint: e, environment: [:])
      Issue.record("a 0755 runtime directory was accepted")
    } catch {
      guard case .directory(let message) = error else { throw error }
      #expect(message.contains("mode 755 lets others in"))
      #expect(message.contains("chmod 0700"))
    }
    #expect(access(e.socketPath, F_OK) != 0)
  }

  /// BrokerCore's `BrokerPaths` (tokenbroker-core) and BrokerWire's `AgentEndpoint` (the front)
  /// name the same socket.
  @Test(arguments: [
    ["XDG_RUNTIME_DIR": "/run/user/1000"], [:], ["XDG_RUNTIME_DIR": "x"],
    ["TOKENBROKER_AGENT_SOCKET": "/srv/a.sock", "XDG_RUNTIME_DIR": "/run/user/1000"], ["TOKENBROKER_AGENT_SOCKET": ""],
  ])
  func frontAndCoreAgreeOnTheSocket(env: [String: String]) {
    let paths = BrokerPaths(environment: env, uid: 1000)
    let e = AgentEndpoint(environment: { env[$0] }, uid: 1000)
    #expect(paths.agentSocket == e.socketPath)
    #expect(paths.runtimeDirectory == e.runtimeDirectory)
  }
}
