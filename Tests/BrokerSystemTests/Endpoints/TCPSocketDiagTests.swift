@testable import BrokerSystem
import Glibc
import Testing

/// The owner of one loopback TCP client by a sock_diag lookup, against real sockets: the same uid
/// as `/proc/net/tcp` says, for IPv4 clients and IPv6 ones on v4-mapped addresses.
struct TCPSocketDiagTests {
  /// A listener on 127.0.0.1, a client of `family` connected to it, and the accepted descriptor.
  static func connection(family: Int32) -> (listener: Int32, client: Int32, accepted: Int32)? {
    let (fds, port) = try! LoopbackSockets.open(port: nil, ipv6: false)
    let client = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var rc: Int32
    if family == AF_INET6 {
      var a = sockaddr_in6()
      a.sin6_family = sa_family_t(AF_INET6)
      a.sin6_port = in_port_t(UInt16(port)).bigEndian
      a.sin6_addr.__in6_u.__u6_addr32 = (0, 0, UInt32(0xFFFF).bigEndian, UInt32(0x7F00_0001).bigEndian)
      rc = withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
      }
    } else {
      var a = sockaddr_in()
      a.sin_family = sa_family_t(AF_INET)
      a.sin_port = in_port_t(UInt16(port)).bigEndian
      a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
      rc = withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
      }
    }
    guard rc == 0 else { return nil }
    var accepted: Int32 = -1
    for _ in 0..<200 where accepted < 0 {
      accepted = accept(fds[0], nil, nil)
      if accepted < 0 { usleep(5000) }
    }
    return accepted >= 0 ? (fds[0], client, accepted) : nil
  }

  static func ends(_ fd: Int32) -> (peer: (address: UInt32, port: UInt16), mine: (address: UInt32, port: UInt16)) {
    func end(_ peer: Bool) -> (address: UInt32, port: UInt16) {
      var a = sockaddr_in()
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      _ = withUnsafeMutablePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length) }
      }
      return (a.sin_addr.s_addr, UInt16(bigEndian: a.sin_port))
    }
    return (end(true), end(false))
  }

  @Test(arguments: [AF_INET, AF_INET6])
  func theClientsOwnerIsThisUserAsTheTablesSay(family: Int32) throws {
    let c = try #require(Self.connection(family: family))
    defer { for fd in [c.listener, c.client, c.accepted] { close(fd) } }
    let (peer, mine) = Self.ends(c.accepted)
    #expect(TCPSocketDiag.owner(local: peer, remote: mine) == getuid())
    #expect(TCPPeerOwner.uid(of: c.accepted) == getuid())
    // Ends that are not one socket's: no answer (then the tables are read, which find none).
    #expect(TCPSocketDiag.owner(local: mine, remote: mine) == nil)
    #expect(TCPSocketDiag.owner(local: (peer.address, peer.port &+ 1), remote: mine) == nil)
  }
}
