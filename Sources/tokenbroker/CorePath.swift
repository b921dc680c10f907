import Glibc

/// Finds `tokenbroker-core` relative to this executable: `<prefix>/libexec/tokenbroker/` beside
/// `<prefix>/bin/` once installed, or the same directory in a build tree.
enum CorePath {
  static func locate() -> String {
    let dir = executableDirectory()
    let installed = dir + "/../libexec/tokenbroker/tokenbroker-core"
    if access(installed, X_OK) == 0 { return installed }
    return dir + "/tokenbroker-core"
  }

  private static func executableDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
    guard n > 0 else { return "." }
    let path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return String(path[..<slash])
  }
}

/// Minimal unbuffered writes to a file descriptor.
struct FileDescriptor {
  let fd: Int32
  static let standardError = FileDescriptor(fd: 2)
  func write(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
      if n <= 0 { return }
      offset += n
    }
  }
}
