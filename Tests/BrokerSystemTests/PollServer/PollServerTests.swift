@testable import BrokerSystem
import Glibc
import Synchronization
import Testing

/// The server's accept side: a full server makes room by closing the reader waiting longest,
/// `quick` answers on the loop's thread, a handed-over connection is answered by `reply`, and
/// `stop(drain: false)` ends the loop with connections still open.
@Suite struct PollServerTests {
  /// Requests end at the peer's shutdown; "quick" is answered by the loop, others handed over.
  func echoServer(_ listener: UnixListener, maxConnections: Int = 64) throws -> PollServer {
    var options = PollServer.Options(listeners: [listener.fd], purpose: "a test", maxRequestBytes: 1024) { bytes, ended in
      ended ? .complete(bytes) : .more
    }
    options.maxConnections = maxConnections
    let server = try PollServer(options)
    try server.start { _, read in read == .request(Array("quick".utf8)) ? Array("fast".utf8) : nil }
    return server
  }

  @Test func quickAnswersOnTheLoopAndTheRestIsHandedOver() async throws {
    let listener = try UnixListener()
    defer { listener.close() }
    let server = try echoServer(listener)
    let handler = Task {
      for await (connection, read) in server.connections {
        guard case .request(let bytes) = read else { server.discard(connection); continue }
        await server.reply(connection, Array("slow:".utf8) + bytes)
      }
    }
    let quick = await Task.detached { () -> [UInt8] in
      let fd = listener.connect()
      defer { close(fd) }
      return UnixListener.exchange(fd, Array("quick".utf8))
    }.value
    #expect(quick == Array("fast".utf8))
    let slow = await Task.detached { () -> [UInt8] in
      let fd = listener.connect()
      defer { close(fd) }
      return UnixListener.exchange(fd, Array("x".utf8))
    }.value
    #expect(slow == Array("slow:x".utf8))
    server.stop()
    await handler.value
  }

  /// Idle connections filling every slot never keep a real request out.
  @Test func aFullServerClosesTheReaderWaitingLongest() async throws {
    let listener = try UnixListener()
    defer { listener.close() }
    let server = try echoServer(listener, maxConnections: 4)
    let idle = (0..<4).map { _ in listener.connect() }
    defer { for fd in idle { close(fd) } }
    usleep(200_000)
    let reply = await Task.detached { () -> [UInt8] in
      let fd = listener.connect()
      defer { close(fd) }
      return UnixListener.exchange(fd, Array("quick".utf8))
    }.value
    #expect(reply == Array("fast".utf8))
    // The first idle connection was closed: its read ends.
    var byte: UInt8 = 0
    #expect(recv(idle[0], &byte, 1, 0) == 0)
    server.stop(drain: false)
    for await _ in server.connections {}
  }

  @Test func stopWithoutDrainClosesOpenConnections() async throws {
    let listener = try UnixListener()
    defer { listener.close() }
    let server = try echoServer(listener)
    let idle = listener.connect()
    defer { close(idle) }
    usleep(100_000)
    server.stop(drain: false)
    for await _ in server.connections {}
    var byte: UInt8 = 0
    #expect(recv(idle, &byte, 1, 0) == 0)
  }

  /// `stopReading()` from `quick` (the redirect listener's result): the reply given goes out,
  /// a connection still being read is closed, and the loop ends.
  @Test func stopReadingSendsTheRepliesGivenAndClosesTheRest() async throws {
    let listener = try UnixListener()
    defer { listener.close() }
    var options = PollServer.Options(listeners: [listener.fd], purpose: "a test", maxRequestBytes: 1024) { bytes, ended in
      ended ? .complete(bytes) : .more
    }
    options.readMilliseconds = 60_000
    let server = try PollServer(options)
    try server.start { _, _ in
      server.stopReading()
      return Array("last".utf8)
    }
    let idle = listener.connect()
    defer { close(idle) }
    let reply = await Task.detached { () -> [UInt8] in
      let fd = listener.connect()
      defer { close(fd) }
      return UnixListener.exchange(fd, Array("x".utf8))
    }.value
    #expect(reply == Array("last".utf8))
    await server.ended()
    var byte: UInt8 = 0
    #expect(recv(idle, &byte, 1, 0) == 0)
  }

  @Test func theReserveIsAQuarterOfTheLimitAtLeast64AtMostHalf() {
    #expect(DescriptorReserve.kept(limit: 64) == 32)
    #expect(DescriptorReserve.kept(limit: 128) == 64)
    #expect(DescriptorReserve.kept(limit: 1024) == 256)
    let reserve = DescriptorReserve(limit: 128, inUse: 20)
    #expect(reserve.connectionRoom == 44)
    #expect(reserve.leavesRoom(after: 95))
    #expect(!reserve.leavesRoom(after: 96))
  }
}
