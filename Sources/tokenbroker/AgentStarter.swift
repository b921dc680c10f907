import BrokerBasics
import BrokerWire
import Glibc

/// Connects to the agent, starting it first when none listens (interface.md §8).
///
/// Of many clients finding no agent at once, only the one holding `<socket>.spawn` (`flock`)
/// starts one; the others poll. Whoever started it holds that lock until the agent accepts, so 200
/// concurrent first calls start one agent, not 200 (the agent's own lock settles any race left).
enum AgentStarter {
  /// How long to wait for a started agent to accept, in ms.
  static let startBound = 3000

  /// A connected descriptor, or nil when the agent cannot be used (the caller runs the full
  /// program).
  ///
  /// The warm path is one `connect` (the server's uid checked by `AgentClient`): no file is read
  /// and nothing is created. Only when no agent listens are the config (`mayStart`) and the
  /// socket's directory (created 0700, or checked) consulted before one is started.
  /// - Parameter mayStart: asked only when no agent listens; false for a call with `--config
  ///   FILE` (a one-off file must not become the config of the agent every later call meets) and
  ///   when the config says `agent = off`.
  static func connect(_ endpoint: AgentEndpoint, mayStart: () -> Bool) -> Int32? {
    switch AgentClient.connect(to: endpoint.socketPath) {
    case .connected(let fd): return fd
    case .failed: return nil
    case .absent: guard mayStart(), endpoint.prepareDirectory() == nil else { return nil }
    }
    let core = Core.path
    let lock = (try? FileLock.open(endpoint.spawnLockPath).get()) ?? -1
    defer { if lock >= 0 { close(lock) } }
    let deadline = MonotonicClock.milliseconds + startBound
    var started: pid_t?
    var pause = 1
    while true {
      if started == nil, lock < 0 || FileLock.attempt(lock) == .locked {
        if case .connected(let fd) = AgentClient.connect(to: endpoint.socketPath) { return fd }
        guard let pid = AgentLauncher.spawn(executable: core, arguments: [core, "agent", "run"]) else { return nil }
        started = pid
      }
      var ts = timespec(tv_sec: 0, tv_nsec: pause * 1_000_000)
      nanosleep(&ts, nil)
      // The one that started the agent waits for nothing else: it looks every millisecond, so it
      // connects within 1 ms of the agent listening (a failed connect costs microseconds). The
      // others back off to 20 ms: hundreds of them must not take the CPU from the starting agent.
      pause = started == nil ? min(pause * 2, 20) : 1
      switch AgentClient.connect(to: endpoint.socketPath) {
      case .connected(let fd): return fd
      case .failed: return nil
      case .absent:
        if MonotonicClock.milliseconds > deadline || started.map(failedToStart) == true { return nil }
      }
    }
  }

  /// True once the agent this process started has ended with a failure (a config error, a
  /// socket it cannot take): none is coming, so the full program runs at once, without waiting
  /// out the start bound. Reaps it. An agent that ended with 0 left the socket to another agent,
  /// which the caller keeps waiting for.
  static func failedToStart(_ pid: pid_t) -> Bool {
    var status: Int32 = 0
    guard waitpid(pid, &status, WNOHANG) == pid else { return false }
    return status != 0
  }
}
