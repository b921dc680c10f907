import BrokerBasics
import BrokerCore
import Glibc

/// The PEM bundle handed to libcurl when a request has extra CA files: the system bundle
/// followed by each extra file, so the extras add trust and never replace the system store.
enum CABundle {
  /// Files larger than this are not CA bundles (and this stops a read of `/dev/zero`).
  static let maxFileBytes = 8 * 1024 * 1024

  /// Reads `systemPath` (skipped when unreadable: libcurl's CA directory still applies) and every
  /// file in `extra`.
  /// - Throws: `HTTPError.other` naming the path when an extra file cannot be read or holds no
  ///   PEM certificate.
  static func load(extra: [String], systemPath: String, host: String) throws(HTTPError) -> [UInt8] {
    var bundle = (try? readFile(systemPath).get()) ?? []
    for path in extra {
      let bytes: [UInt8]
      switch readFile(path) {
      case .success(let read): bytes = read
      case .failure(let reason):
        throw .caFile(path: path, detail: reason.text)
      }
      guard containsPEMCertificate(bytes) else {
        throw .caFile(path: path, detail: "it holds no PEM certificate")
      }
      if let last = bundle.last, last != UInt8(ascii: "\n") { bundle.append(UInt8(ascii: "\n")) }
      bundle += bytes
    }
    return bundle
  }

  static func containsPEMCertificate(_ bytes: [UInt8]) -> Bool {
    let marker = Array("-----BEGIN CERTIFICATE-----".utf8)
    guard bytes.count >= marker.count else { return false }
    return (0...(bytes.count - marker.count)).contains { i in
      bytes[i] == marker[0] && bytes[i..<(i + marker.count)].elementsEqual(marker)
    }
  }

  struct ReadFailure: Error {
    var text: String
  }

  /// The whole of a regular file of at most `maxFileBytes` bytes. Anything else (a FIFO, a
  /// device, a directory) is refused at once, "not a regular file", as the config loader refuses
  /// one (`KeyFileReader.openRegular`): the file is opened without blocking (`O_NONBLOCK`: the
  /// open of a FIFO nobody writes would wait for a writer for ever) and checked on that
  /// descriptor (`fstat`), never by path first.
  static func readFile(_ path: String) -> Result<[UInt8], ReadFailure> {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
    guard fd >= 0 else { return .failure(ReadFailure(text: Errno.current.description)) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { return .failure(ReadFailure(text: Errno.current.description)) }
    guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(ReadFailure(text: "not a regular file")) }
    guard info.st_size <= maxFileBytes else { return .failure(ReadFailure(text: "larger than 8 MiB")) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let n = retryingOnInterrupt { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
      if n < 0 { return .failure(ReadFailure(text: Errno.current.description)) }
      if n == 0 { return .success(out) }
      out += chunk[0..<n]
      if out.count > maxFileBytes { return .failure(ReadFailure(text: "larger than 8 MiB")) }
    }
  }
}
