import BrokerBasics
import CBrokerShims
import Glibc

/// The owner of one TCP socket, asked of the kernel by its two ends: a `SOCK_DIAG_BY_FAMILY`
/// request with an exact `inet_diag_req_v2` on a `NETLINK_SOCK_DIAG` socket (sock_diag(7); what
/// `ss` uses), answered by one `inet_diag_msg` whose `idiag_uid` is the uid `/proc/net/tcp` shows.
///
/// One lookup, not the whole table: reading `/proc/net/tcp` costs the kernel time in proportion to
/// every socket of the machine (13 ms at 680 sockets on the development machine, on each request
/// of exec's endpoints), this about what a system call does. Nil when the kernel does not answer
/// (no sock_diag, an error, no such socket): `TCPPeerOwner` then reads the tables.
enum TCPSocketDiag {
  /// The uid owning the ESTABLISHED TCP socket whose local end is `local` and remote end `remote`
  /// (IPv4: `s_addr` as the raw word, port in host order), asked as an IPv4 socket, then as an
  /// IPv6 socket with v4-mapped addresses (a client that connected from an AF_INET6 socket).
  static func owner(local: (address: UInt32, port: UInt16), remote: (address: UInt32, port: UInt16)) -> UInt32? {
    let fd = socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_SOCK_DIAG)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 1, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    for family in [AF_INET, AF_INET6] {
      if let uid = ask(fd, family: family, local: local, remote: remote) { return uid }
    }
    return nil
  }

  private static func ask(
    _ fd: Int32, family: Int32, local: (address: UInt32, port: UInt16), remote: (address: UInt32, port: UInt16)
  ) -> UInt32? {
    let mapped = UInt32(0xFFFF).bigEndian
    var request = inet_diag_req_v2()
    request.sdiag_family = UInt8(family)
    request.sdiag_protocol = UInt8(IPPROTO_TCP)
    request.idiag_states = 1 << 1  // TCP_ESTABLISHED
    request.id.idiag_sport = local.port.bigEndian
    request.id.idiag_dport = remote.port.bigEndian
    request.id.idiag_src = family == AF_INET ? (local.address, 0, 0, 0) : (0, 0, mapped, local.address)
    request.id.idiag_dst = family == AF_INET ? (remote.address, 0, 0, 0) : (0, 0, mapped, remote.address)
    request.id.idiag_cookie = (UInt32.max, UInt32.max)  // INET_DIAG_NOCOOKIE
    var header = nlmsghdr()
    let headerSize = MemoryLayout<nlmsghdr>.size
    header.nlmsg_len = UInt32(headerSize + MemoryLayout<inet_diag_req_v2>.size)
    header.nlmsg_type = UInt16(SOCK_DIAG_BY_FAMILY)
    header.nlmsg_flags = UInt16(NLM_F_REQUEST)
    header.nlmsg_seq = 1
    let message = withUnsafeBytes(of: &header) { Array($0) } + withUnsafeBytes(of: &request) { Array($0) }
    var kernel = sockaddr_nl()
    kernel.nl_family = sa_family_t(AF_NETLINK)
    let sent = message.withUnsafeBytes { bytes in
      withUnsafePointer(to: &kernel) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
        }
      }
    }
    guard sent == message.count else { return nil }
    var reply = [UInt8](repeating: 0, count: 8192)
    let n = retryingOnInterrupt { reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }
    guard n >= headerSize + MemoryLayout<inet_diag_msg>.size else { return nil }
    return reply.withUnsafeBytes { raw -> UInt32? in
      let answer = raw.loadUnaligned(as: nlmsghdr.self)
      guard answer.nlmsg_type == UInt16(SOCK_DIAG_BY_FAMILY), answer.nlmsg_seq == 1 else { return nil }
      let socket = raw.loadUnaligned(fromByteOffset: headerSize, as: inet_diag_msg.self)
      guard socket.idiag_state == 1, socket.id.idiag_sport == local.port.bigEndian,
        socket.id.idiag_dport == remote.port.bigEndian
      else { return nil }
      return socket.idiag_uid
    }
  }
}
