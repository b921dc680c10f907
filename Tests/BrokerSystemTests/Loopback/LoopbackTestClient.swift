import Dispatch
import Glibc

/// A minimal HTTP/1.1 client over a raw socket, for the loopback listener tests.
enum LoopbackTestClient {
  /// Connects to `host` (`127.0.0.1` or `::1`) on `port`; nil when refused.
  static func connect(port: Int, ipv6: Bool = false) -> Int32? {
    let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let rc: Int32
    if ipv6 {
      var a = sockaddr_in6()
      a.sin6_family = sa_family_t(AF_INET6)
      a.sin6_port = in_port_t(UInt16(port)).bigEndian
      a.sin6_addr = in6addr_loopback
      rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
    } else {
      var a = sockaddr_in()
      a.sin_family = sa_family_t(AF_INET)
      a.sin_port = in_port_t(UInt16(port)).bigEndian
      a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
      rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }
    if rc != 0 {
      close(fd)
      return nil
    }
    return fd
  }

  /// Whether nothing listens on `port` any more, waiting up to 2 s for it: a child another test
  /// is spawning holds a copy of a closed listener until its exec closes it (close-on-exec), and
  /// meanwhile a connect still lands in that listener's queue.
  static func nothingListens(port: Int, ipv6: Bool = false) -> Bool {
    for _ in 0..<100 {
      guard let fd = connect(port: port, ipv6: ipv6) else { return true }
      close(fd)
      usleep(20_000)
    }
    return false
  }

  /// Sends `raw` and reads the whole response (the listener closes after answering).
  /// - Returns: (status, body) or nil when nothing listens.
  static func exchange(port: Int, raw: String, ipv6: Bool = false) -> (status: Int, text: String)? {
    guard let fd = connect(port: port, ipv6: ipv6) else { return nil }
    defer { close(fd) }
    let bytes = Array(raw.utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n <= 0 { break }
      out += chunk[0..<n]
    }
    let text = String(decoding: out, as: UTF8.self)
    let status = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return (status, text)
  }

  static func get(port: Int, _ target: String, host: String? = nil, method: String = "GET", ipv6: Bool = false)
    -> (status: Int, text: String)?
  {
    exchange(port: port, raw: "\(method) \(target) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\n\r\n", ipv6: ipv6)
  }

  /// Runs blocking client calls on a Dispatch thread: the tests' cooperative pool must stay free
  /// for the listener task to start.
  static func off<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in DispatchQueue.global().async { c.resume(returning: body()) } }
  }

  static func asyncGet(port: Int, _ target: String, host: String? = nil, method: String = "GET", ipv6: Bool = false)
    async -> (status: Int, text: String)?
  {
    await off { get(port: port, target, host: host, method: method, ipv6: ipv6) }
  }

  static func asyncExchange(port: Int, raw: String) async -> (status: Int, text: String)? {
    await off { exchange(port: port, raw: raw) }
  }
}
