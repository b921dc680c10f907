import BrokerCore
import Glibc

/// Listening sockets on the loopback interface (RFC 8252 §7.3, §8.3): never on a routable address.
enum LoopbackSockets {
  /// Attempts at finding a random port that is free on both 127.0.0.1 and ::1.
  static let randomPortAttempts = 8

  /// Binds 127.0.0.1 (and, with `ipv6`, ::1 on the same port where it can).
  /// - Parameter port: a fixed port (`redirect-port`), or nil for one the kernel picks.
  /// - Returns: the listening descriptors (non-blocking, close-on-exec) and the port.
  /// - Parameter backlog: `listen`'s queue of connections not yet accepted.
  /// - Throws: `SystemError.listener` when 127.0.0.1 cannot be bound (the fixed port is taken).
  static func open(port: Int?, ipv6: Bool, backlog: Int32 = 16) throws(SystemError) -> (fds: [Int32], port: Int) {
    var attempts = port == nil ? randomPortAttempts : 1
    while true {
      attempts -= 1
      let v4 = try listenIPv4(port: port ?? 0, backlog: backlog)
      guard ipv6 else { return ([v4.fd], v4.port) }
      if let v6 = listenIPv6(port: v4.port) { return ([v4.fd, v6], v4.port) }
      // ::1 has no such port free (or no IPv6 at all): try another random port, else IPv4 only.
      if attempts <= 0 || !ipv6Available() { return ([v4.fd], v4.port) }
      close(v4.fd)
    }
  }

  private static func listenIPv4(port: Int, backlog: Int32) throws(SystemError) -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { throw failure("create a socket", port: port) }
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
      let error = failure("listen on 127.0.0.1:\(port)", port: port)
      close(fd)
      throw error
    }
    var actual = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &actual) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: actual.sin_port)))
  }

  /// ::1 on `port`, IPv6 only (`IPV6_V6ONLY`), or nil when it cannot be bound.
  private static func listenIPv6(port: Int) -> Int32? {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { return nil }
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
    guard bound == 0, listen(fd, 16) == 0 else {
      close(fd)
      return nil
    }
    return fd
  }

  /// False when the system has no IPv6 loopback (a socket on ::1 port 0 cannot be bound).
  private static func ipv6Available() -> Bool {
    guard let fd = listenIPv6(port: 0) else { return false }
    close(fd)
    return true
  }

  private static func failure(_ what: String, port: Int) -> SystemError {
    let reason = String(cString: strerror(errno))
    let remedy =
      port == 0
      ? "check that the loopback interface is up"
      : "free port \(port) or choose another redirect-port for the account (or remove it for a random port)"
    return .listener(what: "cannot \(what) for the sign-in redirect (\(reason))", remedy: remedy)
  }
}
