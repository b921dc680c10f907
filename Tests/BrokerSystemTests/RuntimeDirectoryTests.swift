import BrokerSystem
import Glibc
import Testing

/// RuntimeDirectory.ensure is PrivateDirectory's check with SystemError's messages.
@Suite struct RuntimeDirectoryTests {
  @Test func createsChecksAndSaysWhy() throws {
    let base = String(cString: mkdtemp(strdup("/tmp/tb-runtime-XXXXXX")))
    defer { _ = system("rm -rf '\(base)'") }
    try RuntimeDirectory.ensure(base + "/run")
    chmod(base + "/run", 0o711)
    #expect(throws: SystemError.unsafeDirectory(path: base + "/run", problem: "mode 711 lets others in")) {
      try RuntimeDirectory.ensure(base + "/run")
    }
    #expect(throws: SystemError.call(what: "create the directory", path: base + "/no/run", reason: "No such file or directory")) {
      try RuntimeDirectory.ensure(base + "/no/run")
    }
  }
}
