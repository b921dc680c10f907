@testable import BrokerStore
import Glibc
import Testing

@Suite struct SessionBusTests {
  /// Y16: a cron job has neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR; the user's session
  /// bus at `/run/user/$UID/bus` is taken when that directory is the user's private one.
  @Test func Y16_theUsersBusIsTakenOnlyWhenTheEnvironmentNamesNone() throws {
    let root = "/tmp/tb-bus-root-\(getpid())"
    let session = root + "/\(getuid())"
    mkdir(root, 0o755)
    defer {
      unlink(session + "/bus")
      rmdir(session)
      rmdir(root)
    }
    func address(_ env: [String: String] = [:]) -> String? {
      SessionBus.usersBusAddress(environment: { env[$0] }, uid: getuid(), userRuntimeRoot: root)
    }
    #expect(address() == nil)  // no directory
    #expect(mkdir(session, 0o700) == 0)
    #expect(address() == nil)  // no socket
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var sa = sockaddr_un()
    sa.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &sa.sun_path) { buf in
      for (i, b) in (session + "/bus").utf8.enumerated() { buf[i] = b }
    }
    let bound = withUnsafePointer(to: &sa) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    #expect(bound == 0)
    #expect(address() == "unix:path=" + session + "/bus")
    // A bus the environment names, directly or through XDG_RUNTIME_DIR, is GLib's to use.
    #expect(address(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]) == nil)
    #expect(address(["XDG_RUNTIME_DIR": "/run/user/1"]) == nil)
    // A directory others may enter is not the user's private one.
    chmod(session, 0o755)
    #expect(address() == nil)
  }
}
