@testable import BrokerSystem
import Glibc
import Synchronization
import Testing

/// The server reads only the connections it holds: a descriptor it closed to make room is free
/// for anything else in the process at once (another thread's socket, libsecret's, libcurl's),
/// and a read of that number would take that socket's bytes, or block the loop on a blocking one.
@Suite struct PollServerReadTests {
  /// Sockets another part of the process opened, each with one byte waiting from its peer.
  final class Bystanders: Sendable {
    let sockets = Mutex<[(mine: Int32, peer: Int32)]>([])

    /// Opens sockets until one gets the number `wanted` (the one just closed) and keeps it; at
    /// most 256 tries. Non-blocking: a stray read takes the byte and does not hang the loop.
    func take(_ wanted: Int32) {
      var others: [Int32] = []
      defer { for fd in others { close(fd) } }
      for _ in 0..<256 {
        var fds: [Int32] = [-1, -1]
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, flags, 0, &fds) == 0 else { return }
        guard fds[0] == wanted || fds[1] == wanted else {
          others += fds
          continue
        }
        let (mine, peer) = fds[0] == wanted ? (fds[0], fds[1]) : (fds[1], fds[0])
        var byte: UInt8 = 42
        _ = send(peer, &byte, 1, Int32(MSG_NOSIGNAL))
        sockets.withLock { $0.append((mine, peer)) }
        return
      }
    }

    /// True when every kept socket still has its byte.
    var untouched: Bool {
      sockets.withLock { all in
        all.allSatisfy { pair in
          var byte: UInt8 = 0
          return recv(pair.mine, &byte, 1, Int32(MSG_DONTWAIT)) == 1 && byte == 42
        }
      }
    }

    func closeAll() { sockets.withLock { for pair in $0 { close(pair.mine); close(pair.peer) } } }
  }

  @Test func aDescriptorClosedToMakeRoomAndReusedElsewhereIsNeverRead() async throws {
    let listener = try UnixListener()
    defer { listener.close() }
    let bystanders = Bystanders()
    defer { bystanders.closeAll() }
    let evicted = Mutex<Int32>(-1)
    var options = PollServer.Options(listeners: [listener.fd], purpose: "a test", maxRequestBytes: 1024) { bytes, ended in
      ended ? .complete(bytes) : .more
    }
    options.maxConnections = 1
    // Called right after the close: the number is taken before the loop reads its snapshot.
    options.log = { line in
      guard line.contains("waiting longest") else { return }
      bystanders.take(evicted.withLock { $0 })
    }
    let server = try PollServer(options)
    try server.start()
    let first = listener.connect()
    defer { close(first) }
    let held = try #require(await Self.waitFor { server.state.withLock { Array($0.reads.keys) }.first })
    evicted.withLock { $0 = held }
    let second = listener.connect()  // takes the only place: `first` is closed
    defer { close(second) }
    #expect(await Self.waitFor { bystanders.sockets.withLock { $0.isEmpty ? nil : true } } == true)
    server.stop(drain: false)
    await server.ended()  // the round that made room is over
    #expect(bystanders.untouched, "the server read a descriptor it had closed")
  }

  /// The reader chosen to make room has sent its request since it was last read: it is
  /// answered, not closed. The request is sent while the next connection is admitted, so the
  /// loop has not read it before it makes room.
  @Test func theReaderChosenToMakeRoomIsAnsweredWhenItsRequestHasCome() async throws {
    let listener = try UnixListener()
    defer { listener.close() }
    let first = listener.connect()
    defer { close(first) }
    var options = PollServer.Options(listeners: [listener.fd], purpose: "a test", maxRequestBytes: 1024) { bytes, ended in
      ended ? .complete(bytes) : .more
    }
    options.maxConnections = 1
    let admitted = Mutex(0)
    options.admit = { _, _ in
      // The second connection: the first has been read (nothing yet) and is the one to make room.
      if admitted.withLock({ $0 += 1; return $0 }) == 2 {
        _ = Array("quick".utf8).withUnsafeBytes { send(first, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(first, Int32(SHUT_WR))
      }
      return 0
    }
    let server = try PollServer(options)
    try server.start { _, read in read == .request(Array("quick".utf8)) ? Array("fast".utf8) : [] }
    _ = try #require(await Self.waitFor { server.state.withLock { $0.reads.isEmpty ? nil : true } })
    let second = listener.connect()
    defer { close(second) }
    let reply = await Task.detached { UnixListener.exchange(first, []) }.value
    #expect(reply == Array("fast".utf8))
    server.stop(drain: false)
    await server.ended()
  }

  /// More idle clients than the server holds, connecting while it makes room for each (their
  /// sockets take the numbers it frees): the real request after them is answered.
  @Test func aRealRequestAmongManyIdleConnectionsIsAnswered() async throws {
    let listener = try UnixListener()
    defer { listener.close() }
    var options = PollServer.Options(listeners: [listener.fd], purpose: "a test", maxRequestBytes: 1024) { bytes, ended in
      ended ? .complete(bytes) : .more
    }
    options.maxConnections = 4
    let server = try PollServer(options)
    try server.start { _, read in read == .request(Array("real".utf8)) ? Array("answered".utf8) : [] }
    let idle = await Task.detached { (0..<48).map { _ in listener.connect() } }.value
    defer { for fd in idle { close(fd) } }
    let reply = await Task.detached { () -> [UInt8] in
      let fd = listener.connect()
      defer { close(fd) }
      return UnixListener.exchange(fd, Array("real".utf8))
    }.value
    #expect(reply == Array("answered".utf8))
    server.stop(drain: false)
    await server.ended()
  }

  /// `value()`'s first non-nil result, polled every 10 ms for up to 10 s (a "does not hang" bound).
  static func waitFor<T>(_ value: () -> T?) async -> T? {
    for _ in 0..<1000 {
      if let found = value() { return found }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return nil
  }
}
