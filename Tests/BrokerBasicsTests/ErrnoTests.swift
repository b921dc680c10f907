import BrokerBasics
import Glibc
import Testing

@Suite struct ErrnoTests {
  @Test func describesTheValueAsStrerrorDoes() {
    #expect(Errno(ENOENT).description == "No such file or directory")
    errno = EACCES
    #expect(Errno.current == Errno(EACCES))
  }

  @Test func aCallInterruptedBeforeItDidAnythingIsMadeAgain() {
    var calls = 0
    let result = retryingOnInterrupt { () -> Int in
      calls += 1
      if calls < 3 {
        errno = EINTR
        return -1
      }
      return 7
    }
    #expect((result, calls) == (7, 3))
  }

  @Test func anotherFailureIsReturnedWithItsErrno() {
    var calls = 0
    let result = retryingOnInterrupt { () -> Int32 in
      calls += 1
      errno = EAGAIN
      return -1
    }
    #expect((result, calls) == (-1, 1))
    #expect(Errno.current == Errno(EAGAIN))
  }

  @Test func writesAWholeBufferAndSaysWhyItCouldNot() {
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    let bytes = [UInt8](repeating: 0x61, count: 10_000)
    #expect(writeAll(fds[1], bytes) == nil)
    close(fds[1])
    var read = 0
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = chunk.withUnsafeMutableBytes { Glibc.read(fds[0], $0.baseAddress, $0.count) }
      if n <= 0 { break }
      read += n
    }
    close(fds[0])
    #expect(read == bytes.count)
    #expect(writeAll(fds[1], bytes) == Errno(EBADF))
  }
}
