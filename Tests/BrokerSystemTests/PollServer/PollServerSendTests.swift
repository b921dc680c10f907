@testable import BrokerSystem
import Glibc
import Testing

/// The poll server leaves a reply to its caller unless the socket is full, and sends the rest
/// itself: a full socket, a gone peer and the loop's own long reply are made here on purpose.
@Suite struct PollServerSendTests {
  /// A full socket: `send` reports how far it got, and the rest goes out once the peer reads.
  @Test func sendStopsAtAFullSocketAndResumes() throws {
    var fds: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
    defer { close(fds[0]); close(fds[1]) }
    var small: Int32 = 4096
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    let bytes = (0..<60_000).map { UInt8($0 % 251) }  // a resume from the wrong offset shows
    guard case .partial(let first) = PollServer.send(fds[0], bytes, from: 0) else {
      Issue.record("a 4 KiB socket took 60,000 bytes at once")
      return
    }
    #expect(first > 0 && first < bytes.count)
    var received: [UInt8] = []
    var offset = first
    var spins = 0
    var chunk = [UInt8](repeating: 0, count: 65536)
    while received.count < bytes.count {
      let n = chunk.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, 0) }
      if n > 0 { received += chunk[0..<n] }
      guard offset < bytes.count else { continue }
      switch PollServer.send(fds[0], bytes, from: offset) {
      case .partial(let next): offset = next
      case .done: offset = bytes.count
      }
      spins += 1
      if spins > 1_000_000 {  // `.done` before all was sent: nothing more would ever arrive
        Issue.record("send stopped at \(offset) of \(bytes.count) bytes")
        return
      }
    }
    #expect(received == bytes)
  }

  /// A peer that has gone away: the reply is dropped (`.done`), no SIGPIPE.
  @Test func sendToAGonePeerIsDone() throws {
    var fds: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
    defer { close(fds[0]) }
    close(fds[1])
    guard case .done = PollServer.send(fds[0], Array("exit=0\n".utf8), from: 0) else {
      Issue.record("a send to a closed peer did not end")
      return
    }
  }

  /// A reply the loop sends itself into a full socket goes out whole once the peer reads, and
  /// the connection is closed after its last byte.
  @Test func theLoopsOwnReplyResumesAtAFullSocket() async throws {
    let listener = try UnixListener()
    defer { listener.close() }
    var options = PollServer.Options(listeners: [listener.fd], purpose: "a test", maxRequestBytes: 1024) { _, _ in .more }
    options.writeMilliseconds = 30_000
    let loop = try PollServer(options)
    try loop.start()
    var fds: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
    defer { close(fds[1]) }
    _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
    var small: Int32 = 4096
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    let bytes = (0..<60_000).map { UInt8($0 % 251) }
    loop.state.withLock { $0.open += 1 }  // as `acceptAll` counts a connection
    loop.answer(PollConnection(fd: fds[0], serial: 1, listener: 0, peer: 0), bytes)
    #expect(loop.state.withLock { $0.writes[fds[0]] != nil })  // the socket took only part
    loop.wake.signal()
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {  // blocking reads until the loop closes its end
      let n = chunk.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, 0) }
      if n <= 0 { break }
      received += chunk[0..<n]
    }
    #expect(received == bytes)
    #expect(loop.state.withLock { $0.open } == 0)
    loop.stop()
    for await _ in loop.connections {}
  }
}
