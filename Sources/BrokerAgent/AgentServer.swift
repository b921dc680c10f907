import BrokerCore
import BrokerWire
import Glibc

/// The agent's server loop (interface.md §8; code-models.md §9.8): one request per connection,
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

  private let loop: SocketLoop
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
    loop = try SocketLoop(
      listenFD: listenFD, forwardFD: forwardFD, expectedUID: expectedUID, maxRequestBytes: AgentProtocol.maxMessageBytes,
      readMilliseconds: Self.readBound, idleMilliseconds: max(1, idleTimeout) * 1000, keepAlive: keepAlive,
      writeMilliseconds: Self.writeBound, log: log)
    self.log = log
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
    try loop.start { bytes in Self.quickReply(bytes, quick) }
    let loop = self.loop
    let log = self.log
    await withDiscardingTaskGroup { group in
      for await (connection, read) in loop.connections {
        let answer = connection.forwarded ? forwarded : handler
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
    _ connection: AgentConnection, _ read: SocketLoop.ReadResult, loop: SocketLoop,
    log: @Sendable (String) -> Void, handler: Handler
  ) async {
    let request: AgentRequest
    switch read {
    case .request(let bytes):
      do {
        request = try AgentRequest.decode(bytes)
      } catch {
        log("refused a request from pid \(connection.peerPID): \(error)")
        loop.discard(connection)
        return
      }
    case .tooLarge:
      log("refused a request from pid \(connection.peerPID): larger than \(AgentProtocol.maxMessageBytes) bytes")
      loop.discard(connection)
      return
    case .timedOut:
      log("dropped a connection from pid \(connection.peerPID): no complete request within \(readBound / 1000) s")
      loop.discard(connection)
      return
    case .failed(let error):
      log("dropped a connection from pid \(connection.peerPID): \(String(cString: strerror(error)))")
      loop.discard(connection)
      return
    }
    let reply = await handler(request)
    let bytes: [UInt8]
    do {
      bytes = try reply.encoded()
    } catch {
      // Output the protocol cannot carry: the client runs the full program itself.
      log("answered pid \(connection.peerPID) 'not served': \(error)")
      bytes = (try? AgentReply.notServed.encoded()) ?? []
    }
    await loop.reply(connection, bytes, timeoutMilliseconds: writeBound)
  }
}
