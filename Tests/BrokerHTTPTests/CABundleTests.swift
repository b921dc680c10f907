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
}
