import BrokerBasics
import BrokerCore
// The socket types (SOCK_STREAM, SOCK_CLOEXEC, ...) come through CBrokerShims since its header
// includes linux/netlink.h for sock_diag: without this import the release build (whole module)
// does not find them in Glibc.
import CBrokerShims
import Glibc

/// Listening sockets on the loopback interface (RFC 8252 §7.3, §8.3): never on a routable address.
enum LoopbackSockets {
  /// Attempts at finding a random port that is free on both 127.0.0.1 and ::1.
  static let randomPortAttempts = 8

  /// Binds 127.0.0.1 (and, with `ipv6`, ::1 on the same port: a browser sent to `localhost` may
  /// try either address first, so a port held by another program on one of them would hand it the
  /// redirect). Only a system without an IPv6 loopback (EADDRNOTAVAIL, EAFNOSUPPORT) is served on
  /// 127.0.0.1 alone.
  /// - Parameters:
  ///   - port: a fixed port (`redirect-port`), or nil for one the kernel picks (free on both).
  ///   - backlog: `listen`'s queue of connections not yet accepted.
  /// - Returns: the listening descriptors (non-blocking, close-on-exec) and the port.
  /// - Throws: `SystemError.redirectPortTaken` when the fixed port is in use on either address;
  ///   `.listener` when a socket cannot be set up or no random port is free on both.
  static func open(port: Int?, ipv6: Bool, backlog: Int32 = 16) throws(SystemError) -> (fds: [Int32], port: Int) {
    for _ in 0..<(port == nil ? randomPortAttempts : 1) {
      let v4 = try listenIPv4(port: port ?? 0, backlog: backlog)
      guard ipv6 else { return ([v4.fd], v4.port) }
      switch listenIPv6(port: v4.port, backlog: backlog) {
      case .listening(let v6): return ([v4.fd, v6], v4.port)
      case .unavailable: return ([v4.fd], v4.port)  // no ::1 at all: localhost can only be 127.0.0.1
      case .failed(let code):
        close(v4.fd)
        if code != EADDRINUSE { throw failure("listen on [::1]:\(v4.port)", port: port ?? 0, code: code) }
        if port != nil { throw .redirectPortTaken(port: v4.port, address: "[::1]") }
      }
    }
    throw .listener(
      what: "cannot find a port free on both 127.0.0.1 and ::1 for the sign-in redirect",
      remedy: "set redirect-port for the account to a port free on both")
  }

  private static func listenIPv4(port: Int, backlog: Int32) throws(SystemError) -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { throw failure("create a socket", port: port, code: errno) }
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port)).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(fd, backlog) == 0 else {
      let code = errno
      close(fd)
      if code == EADDRINUSE && port != 0 { throw .redirectPortTaken(port: port, address: "127.0.0.1") }
      throw failure("listen on 127.0.0.1:\(port)", port: port, code: code)
    }
    var actual = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &actual) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: actual.sin_port)))
  }

  private enum IPv6Listen {
    case listening(Int32)
    /// No IPv6 loopback on this system.
    case unavailable
    /// `errno` of the failed call (EADDRINUSE: another program holds the port on ::1).
    case failed(Int32)
  }

  /// ::1 on `port`, IPv6 only (`IPV6_V6ONLY`).
  private static func listenIPv6(port: Int, backlog: Int32) -> IPv6Listen {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { return errno == EAFNOSUPPORT ? .unavailable : .failed(errno) }
    var one: Int32 = 1
    _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_port = in_port_t(UInt16(port)).bigEndian
    address.sin6_addr = in6addr_loopback
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
    }
    guard bound == 0, listen(fd, backlog) == 0 else {
      let code = errno
      close(fd)
      return code == EADDRNOTAVAIL || code == EAFNOSUPPORT ? .unavailable : .failed(code)
    }
    return .listening(fd)
  }

  private static func failure(_ what: String, port: Int, code: Int32) -> SystemError {
    let reason = Errno(code).description
    let remedy =
      port == 0
      ? "check that the loopback interface is up"
      : "free port \(port) or choose another redirect-port for the account (or remove it for a random port)"
    return .listener(what: "cannot \(what) for the sign-in redirect (\(reason))", remedy: remedy)
  }
}
