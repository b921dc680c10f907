import BrokerBasics
internal import BrokerWire
internal import BrokerCore
internal import Glibc

/// Glibc file operations for files only the user may read: owner and mode checks, atomic
/// replacement, and an inter-process lock. Every failure is `StoreError.file` naming `reportPath`
/// (the token file) and saying what to do.
struct PrivateFiles {
  /// The path errors name.
  let reportPath: String

  private func failure(_ detail: String) -> StoreError { .file(path: reportPath, detail: detail) }
  private func errnoText(_ code: Int32 = errno) -> String { Errno(code).description }

  /// Creates `directory` (and missing parents) with mode 0700, then checks it.
  func ensureDirectory(_ directory: String) throws(StoreError) {
    var prefix = ""
    for component in directory.split(separator: "/") {
      prefix += "/" + component
      var st = stat()
      if stat(prefix, &st) == 0 { continue }
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
        throw failure("cannot create the directory \(prefix): \(Errno.current)")
      }
    }
    _ = try checkDirectory(directory)
  }

  /// False when `directory` does not exist; throws when it is not a directory owned by the user
  /// with no group/other access.
  func checkDirectory(_ directory: String) throws(StoreError) -> Bool {
    var st = stat()
    if stat(directory, &st) != 0 {
      if errno == ENOENT { return false }
      throw failure("cannot examine the directory \(directory): \(Errno.current)")
    }
    guard st.st_mode & S_IFMT == S_IFDIR else { throw failure("\(directory) is not a directory") }
    try checkOwner(st, directory)
    if st.st_mode & 0o077 != 0 {
      throw failure("the directory \(directory) is accessible by group or others; run 'chmod 700 \(directory)'")
    }
    return true
  }

  private func checkOwner(_ st: stat, _ path: String) throws(StoreError) {
    if st.st_uid != geteuid() {
      throw failure("\(path) is owned by uid \(st.st_uid), not by you (uid \(geteuid())); remove it")
    }
  }

  /// Checks an open file: a regular file owned by the user, mode without group/other bits.
  private func checkFile(_ fd: Int32, _ path: String) throws(StoreError) {
    var st = stat()
    guard fstat(fd, &st) == 0 else { throw failure("cannot examine \(path): \(Errno.current)") }
    guard st.st_mode & S_IFMT == S_IFREG else { throw failure("\(path) is not a regular file") }
    try checkOwner(st, path)
    if st.st_mode & 0o077 != 0 {
      throw failure("\(path) is readable or writable by group or others; run 'chmod 600 \(path)'")
    }
  }

  private func open(_ path: String, _ flags: Int32) throws(StoreError) -> Int32? {
    let fd = Glibc.open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0o600)
    if fd >= 0 { return fd }
    let code = errno
    if code == ENOENT { return nil }
    if code == ELOOP { throw failure("\(path) is a symbolic link; replace it with a regular file") }
    throw failure("cannot open \(path): \(Errno(code))")
  }

  /// True when something is at `path` (a dangling link counts; ENOENT is the only "no").
  func exists(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 || errno != ENOENT
  }

  /// The whole content of `path`, or nil when it does not exist.
  func read(_ path: String) throws(StoreError) -> [UInt8]? {
    guard let fd = try open(path, O_RDONLY) else { return nil }
    defer { close(fd) }
    try checkFile(fd, path)
    var content: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = retryingOnInterrupt { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
      if n == 0 { break }
      if n < 0 { throw failure("cannot read \(path): \(Errno.current)") }
      content += chunk[0..<n]
    }
    return content
  }

  /// Replaces `path` atomically: a 0600 temporary file in the same directory, fsync, rename,
  /// fsync of the directory. The temporary file is removed on failure.
  func writeAtomically(_ path: String, directory: String, bytes: [UInt8]) throws(StoreError) {
    var template = Array((directory + "/.tokens.XXXXXX").utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { $0.baseAddress.map { mkstemp($0) } ?? -1 }
    guard fd >= 0 else { throw failure("cannot create a temporary file in \(directory): \(Errno.current)") }
    let temp = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var ok = false
    defer { if !ok { unlink(temp) } }
    if let error = writeAll(fd, bytes) {
      close(fd)
      throw failure("cannot write \(temp): \(error)")
    }
    let synced = fchmod(fd, 0o600) == 0 && fsync(fd) == 0
    let code = errno
    close(fd)
    guard synced else { throw failure("cannot write \(temp): \(Errno(code))") }
    guard rename(temp, path) == 0 else { throw failure("cannot replace \(path): \(Errno.current)") }
    ok = true
    let dirfd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if dirfd >= 0 {
      _ = fsync(dirfd)
      close(dirfd)
    }
  }

  /// Runs `body` holding an exclusive `flock` on `lockPath` (created 0600), so read-modify-write
  /// cycles of concurrent processes never interleave. Waits at most `timeout` seconds.
  func withLock<T>(_ lockPath: String, timeout: Double, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
    guard let fd = try open(lockPath, O_RDWR | O_CREAT) else {
      throw failure("cannot create the lock file \(lockPath)")
    }
    defer { close(fd) }  // closing releases the lock
    try checkFile(fd, lockPath)
    let deadline = MonotonicClock.seconds + timeout
    switch FileLock.wait(fd, maxPause: 10, keepWaiting: { MonotonicClock.seconds < deadline }) {
    case .locked: return try body()
    case .busy: throw failure("another process has held \(lockPath) for \(Int(timeout)) s; try again")
    case .failed(let error): throw failure("cannot lock \(lockPath): \(error)")
    }
  }
}
