import BrokerCore
import Foundation
import Testing

@testable import BrokerHTTP

@Suite struct CABundleTests {
  let server: TestServer
  init() throws { server = try TestServer.get() }

  @Test func extraFilesFollowTheSystemBundle() throws {
    let system = EasyHandle.systemCAPath
    let systemBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: system)))
    let extra = try [UInt8](Data(contentsOf: URL(fileURLWithPath: server.caFile)))
    let bundle = try CABundle.load(extra: [server.caFile], systemPath: system, host: "h")
    #expect(bundle.starts(with: systemBytes))
    #expect(Array(bundle.suffix(extra.count)) == extra)
  }

  @Test func aMissingSystemBundleStillLoadsTheExtras() throws {
    let bundle = try CABundle.load(extra: [server.caFile], systemPath: "/nonexistent", host: "h")
    #expect(CABundle.containsPEMCertificate(bundle))
  }

  @Test func filesWithoutACertificateOrNotRegularAreRefused() throws {
    let key = server.directory + "/server.key"
    #expect(throws: HTTPError.caFile(path: key, detail: "it holds no PEM certificate")) {
      try CABundle.load(extra: [key], systemPath: "/nonexistent", host: "h")
    }
    #expect(throws: HTTPError.caFile(path: "/tmp", detail: "not a regular file")) {
      try CABundle.load(extra: ["/tmp"], systemPath: "/nonexistent", host: "h")
    }
    #expect(throws: HTTPError.caFile(path: "/nonexistent/ca.pem", detail: "No such file or directory")) {
      try CABundle.load(extra: ["/nonexistent/ca.pem"], systemPath: "/nonexistent", host: "h")
    }
  }

  /// A `ca-file` that is a FIFO is refused at once, "not a regular file", as the config
  /// loader refuses one. Opened without O_NONBLOCK, a FIFO's open waited for a writer: the request
  /// hung for ever. Here a writer comes after 3 s, to end an open that waits.
  @Test func aFIFOCAFileIsRefusedAtOnce() throws {
    let dir = String(cString: mkdtemp(strdup("/tmp/tb-ca-XXXXXX")))
    defer { _ = system("rm -rf '\(dir)'") }
    let fifo = dir + "/ca.pem"
    #expect(mkfifo(fifo, 0o600) == 0)
    Thread.detachNewThread {
      sleep(3)
      let fd = open(fifo, O_WRONLY | O_NONBLOCK)
      if fd >= 0 { close(fd) }
    }
    let started = Date()
    #expect(throws: HTTPError.caFile(path: fifo, detail: "not a regular file")) {
      try CABundle.load(extra: [fifo], systemPath: "/nonexistent", host: "h")
    }
    #expect(Date().timeIntervalSince(started) < 1.5)
  }
}
