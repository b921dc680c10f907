import BrokerBasics
import BrokerCore
import BrokerSystem
import BrokerWire
import Glibc

/// The agent's server loop (interface.md §8; architecture.md, "Agent rules"): one request per connection,
/// one child task per connection in a discarding task group, framing (`AgentRequest`) apart from
/// handling (the caller's `handler`). Per-connection errors are logged through `log` (which the
/// caller wires to stderr only with `--verbose`) and swallowed; no log line carries a value.
public final class AgentServer: Sendable {
  /// Answers one decoded request.
  public typealias Handler = @Sendable (AgentRequest) async -> AgentReply
  /// Answers a decoded request at once, on the socket loop's thread, when it can without
  /// waiting for anything (nil: the request goes to `Handler`). It must not block for long:
  /// every other connection waits meanwhile.
  public typealias QuickHandler = @Sendable (AgentRequest) -> AgentReply?

  /// How long a client may take to send its request, in ms.
  static let readBound = 10_000
  /// How long a client may take to take in its reply, in ms.
  static let writeBound = 10_000

  private let loop: PollServer
  private let log: @Sendable (String) -> Void

  /// - Parameters:
  ///   - listenFD: the listening socket (its owner closes it after `run` returns).
  ///   - forwardFD: the forwarding socket's (interface.md §8), or -1: its requests go to `run`'s
  ///     `forwarded` handler.
  ///   - expectedUID: the only uid allowed to connect (the agent's own; injected by tests).
  ///   - idleTimeout: seconds without an open connection after which `run` returns.
  ///   - keepAlive: asked once that time has passed; true keeps serving for another idle time
  ///     (the agent holds the encrypted store's key).
  ///   - log: receives one line per refused or failed connection.
  /// - Throws: `AgentSetupError.call` when the loop's pipe cannot be made.
  public init(
    listenFD: Int32, forwardFD: Int32 = -1, expectedUID: UInt32 = getuid(), idleTimeout: Int,
    keepAlive: @escaping @Sendable () -> Bool = { false }, log: @escaping @Sendable (String) -> Void
  ) throws(AgentSetupError) {
    let limit = AgentProtocol.maxMessageBytes
    var options = PollServer.Options(listeners: forwardFD >= 0 ? [listenFD, forwardFD] : [listenFD], purpose: "the agent socket", maxRequestBytes: limit) { bytes, ended in
      // A request is whole when the client shuts its writing side.
      bytes.count > limit ? .tooLarge : ended ? .complete(bytes) : .more
    }
    options.admit = { fd, listener in Self.admit(fd, forwarded: listener == 1, expectedUID: expectedUID, log: log) }
    options.readMilliseconds = Self.readBound
    options.writeMilliseconds = Self.writeBound
    options.idleMilliseconds = max(1, idleTimeout) * 1000
    options.keepAlive = keepAlive
    options.log = log
    do {
      loop = try PollServer(options)
    } catch {
      throw Self.setupError(error)
    }
    self.log = log
  }

  /// Every new connection's `SO_PEERCRED` uid is compared with `expectedUID` before a byte is
  /// read; others are closed at once. The kernel gives that uid as the agent's user namespace sees
  /// it, so a process in a user namespace whose uid maps to the agent's (`unshare
  /// --map-root-user`, rootless Podman) passes, and one whose uid maps to no uid or another one
  /// does not. - Returns: the peer's pid, or nil to refuse.
  static func admit(_ fd: Int32, forwarded: Bool, expectedUID: UInt32, log: (String) -> Void) -> Int32? {
    let peer = PeerCheck.peer(of: fd)
    guard let peer, peer.uid == expectedUID else {
      let who = peer.map { "uid \($0.uid) (pid \($0.pid))" } ?? "an unknown peer"
      let socket = forwarded ? " on the forwarding socket" : ""
      log("refused a connection from \(who)\(socket): only uid \(expectedUID) may use this agent")
      return nil
    }
    return peer.pid
  }

  static func setupError(_ error: SystemError) -> AgentSetupError {
    if case .call(let what, let path, let reason) = error { return .call(what: what, path: path, reason: reason) }
    return .call(what: "start", path: "the agent socket", reason: error.description)
  }

  /// Serves until `stop()` or the idle timeout, then until every open connection is answered.
  /// - Parameters:
  ///   - quick: answers a request on the loop's thread when it can (the agent's kept answers),
  ///     with no hop to the cooperative pool; a request it cannot answer goes to `handler`.
  ///   - forwarded: answers each request that came on the forwarding socket, one child task each
  ///     (never `quick`).
  ///   - handler: answers every other request, one child task each.
  /// - Throws: `AgentSetupError.call` when the I/O thread cannot start.
  public func run(
    quick: @escaping QuickHandler = { _ in nil }, forwarded: @escaping Handler = { _ in AgentReply(exit: ExitStatus.usage.rawValue) },
    handler: @escaping Handler
  ) async throws(AgentSetupError) {
    do {
      // A forwarded request is never answered from the kept answers: its own rules decide it.
      try loop.start { connection, read in
        guard connection.listener == 0, case .request(let bytes) = read else { return nil }
        return Self.quickReply(bytes, quick)
      }
    } catch {
      throw Self.setupError(error)
    }
    let loop = self.loop
    let log = self.log
    await withDiscardingTaskGroup { group in
      for await (connection, read) in loop.connections {
        let answer = connection.listener == 1 ? forwarded : handler
        group.addTask { await Self.serve(connection, read, loop: loop, log: log, handler: answer) }
      }
    }
  }

  /// `quick`'s reply to the request in `bytes`, encoded; nil when it has none (or the request
  /// does not decode: `serve` says why).
  static func quickReply(_ bytes: [UInt8], _ quick: QuickHandler) -> [UInt8]? {
    guard let request = try? AgentRequest.decode(bytes), let reply = quick(request) else { return nil }
    return try? reply.encoded()
  }

  /// Stops accepting; requests already accepted are still answered.
  public func stop() { loop.stop() }

  static func serve(
    _ connection: PollConnection, _ read: PollRead, loop: PollServer,
    log: @Sendable (String) -> Void, handler: Handler
  ) async {
    let request: AgentRequest
    switch read {
    case .request(let bytes):
      do {
        request = try AgentRequest.decode(bytes)
      } catch {
        log("refused a request from pid \(connection.peer): \(error)")
        loop.discard(connection)
        return
      }
    case .tooLarge:
      log("refused a request from pid \(connection.peer): larger than \(AgentProtocol.maxMessageBytes) bytes")
      loop.discard(connection)
      return
    case .timedOut:
      log("dropped a connection from pid \(connection.peer): no complete request within \(readBound / 1000) s")
      loop.discard(connection)
      return
    case .closed:
      loop.discard(connection)
      return
    case .failed(let error):
      log("dropped a connection from pid \(connection.peer): \(Errno(error).description)")
      loop.discard(connection)
      return
    }
    let reply = await handler(request)
    let bytes: [UInt8]
    do {
      bytes = try reply.encoded()
    } catch {
      // Output the protocol cannot carry: the client runs the full program itself.
      log("answered pid \(connection.peer) 'not served': \(error)")
      bytes = (try? AgentReply.notServed.encoded()) ?? []
    }
    await loop.reply(connection, bytes)
  }
}
