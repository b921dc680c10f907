import Glibc

/// A listening Unix socket (non-blocking) in a new temporary directory; `close()` removes both.
struct UnixListener {
  let fd: Int32
  let path: String
  let directory: String

  init() throws {
    directory = String(cString: mkdtemp(strdup("/tmp/tb-poll-test-XXXXXX")))
    path = directory + "/s"
    fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    var address = UnixListener.address(path)
    let rc = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard rc == 0, listen(fd, 64) == 0 else { throw PollTestError.setup(errno) }
  }

  static func address(_ path: String) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      let bytes = Array(path.utf8)
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    return address
  }

  /// A blocking connection to the socket (the caller closes it), or -1.
  func connect() -> Int32 {
    let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = UnixListener.address(path)
    let rc = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if rc != 0 { Glibc.close(client); return -1 }
    var bound = timeval(tv_sec: 20, tv_usec: 0)
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &bound, socklen_t(MemoryLayout<timeval>.size))
    return client
  }

  /// Sends `request` on `fd`, shuts the writing side, and reads to the end (or the 20 s bound).
  static func exchange(_ fd: Int32, _ request: [UInt8]) -> [UInt8] {
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    shutdown(fd, Int32(SHUT_WR))
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n <= 0 { return received }
      received += chunk[0..<n]
    }
  }

  func close() {
    Glibc.close(fd)
    unlink(path)
    rmdir(directory)
  }
}

enum PollTestError: Error { case setup(Int32) }
