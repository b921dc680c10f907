import BrokerWire
import Glibc
import Testing

@Suite struct PrivateDirectoryTests {
  private func scratch() -> String { String(cString: mkdtemp(strdup("/tmp/tb-private-XXXXXX"))) }

  /// Created 0700; an existing directory is checked as it is, never chmod-ed.
  @Test func createsWithMode0700AndChecksExistingOnes() {
    let base = scratch()
    defer { _ = system("rm -rf '\(base)'") }
    let dir = base + "/d"
    #expect(PrivateDirectory.check(dir, create: true, exclusive: true) == nil)
    var st = stat()
    #expect(lstat(dir, &st) == 0 && st.st_mode & 0o777 == 0o700)
    chmod(dir, 0o750)
    #expect(PrivateDirectory.check(dir, create: true, exclusive: true) == .mode(0o750))
    #expect(PrivateDirectory.check(dir, create: true, exclusive: true)?.description == "mode 750 lets others in")
    #expect(lstat(dir, &st) == 0 && st.st_mode & 0o777 == 0o750)
    // Not exclusive (an explicit socket's directory): readable by others is fine, writable is not.
    chmod(dir, 0o755)
    #expect(PrivateDirectory.check(dir, create: false, exclusive: false) == nil)
    chmod(dir, 0o775)
    #expect(PrivateDirectory.check(dir, create: false, exclusive: false) == .mode(0o775))
  }

  /// Another owner, a symbolic link, a file and a missing directory are refused, each saying why.
  @Test func refusesWhatIsNotOursOrNotADirectory() {
    let base = scratch()
    defer { _ = system("rm -rf '\(base)'") }
    #expect(PrivateDirectory.check(base, create: false, exclusive: true, uid: getuid() + 1) == .owner(getuid()))
    #expect(PrivateDirectory.check(base, create: false, exclusive: true, uid: getuid() + 1)?.isUnsafe == true)
    symlink(base, base + "/link")
    #expect(PrivateDirectory.check(base + "/link", create: true, exclusive: true) == .notADirectory)
    close(open(base + "/file", O_CREAT | O_WRONLY, 0o600))
    #expect(PrivateDirectory.check(base + "/file", create: true, exclusive: true) == .notADirectory)
    #expect(PrivateDirectory.check(base + "/missing", create: false, exclusive: true) == .cannotInspect(ENOENT))
    #expect(PrivateDirectory.check(base + "/missing/d", create: true, exclusive: true) == .cannotCreate(ENOENT))
    #expect(PrivateDirectory.check(base + "/missing", create: false, exclusive: true)?.isUnsafe == false)
  }
}
