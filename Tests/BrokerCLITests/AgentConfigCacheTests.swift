@testable import BrokerCLI
import BrokerCore
import Foundation
import Testing

/// The agent's config is the config as it is now: any change to a file's bytes is seen by the
/// next request, also one that keeps the size and lands within the same clock tick.
@Suite struct AgentConfigCacheTests {
  let h: CLIHarness
  var file: String { h.directory + "/config/tokenbroker/config" }
  init() throws { h = try CLIHarness(config: fileStoreConfig) }

  @Test func everyEditIsSeenAndAnUnchangedFileIsNotParsedAgain() throws {
    let cache = AgentConfigCache()
    let first = try cache.config(files: [file], explicit: true)
    #expect(first.account(named: "work") != nil)
    #expect(try cache.config(files: [file], explicit: true) == first)
    // Same length, same instant: only the bytes differ.
    try fileStoreConfig.replacingOccurrences(of: "[account work]", with: "[account wxrk]")
      .write(toFile: file, atomically: false, encoding: .utf8)
    let edited = try cache.config(files: [file], explicit: true)
    #expect(edited.account(named: "work") == nil)
    #expect(edited.account(named: "wxrk") != nil)
  }

  /// A file past the bytes compared is parsed anew each time: an edit after its first MiB (here
  /// of comments) is seen too.
  @Test func anEditPastTheComparedBytesIsSeen() throws {
    let cache = AgentConfigCache()
    let padding = String(repeating: "# " + String(repeating: "x", count: 76) + "\n", count: 1 << 14)
    try (padding + fileStoreConfig).write(toFile: file, atomically: false, encoding: .utf8)
    #expect(try cache.config(files: [file], explicit: true).account(named: "work") != nil)
    try (padding + fileStoreConfig.replacingOccurrences(of: "[account work]", with: "[account wxrk]"))
      .write(toFile: file, atomically: false, encoding: .utf8)
    #expect(try cache.config(files: [file], explicit: true).account(named: "wxrk") != nil)
  }

  /// The bytes compared are the bytes parsed: a file edited right after it was read (here to
  /// `wxrk`) gives the config of what was read, never the edit's config kept under the old bytes.
  @Test func theBytesComparedAreTheBytesParsed() throws {
    let read = Array(fileStoreConfig.utf8)
    let cache = AgentConfigCache(read: { _, _ in read })
    try fileStoreConfig.replacingOccurrences(of: "[account work]", with: "[account wxrk]")
      .write(toFile: file, atomically: true, encoding: .utf8)
    #expect(try cache.config(files: [file], explicit: true).account(named: "work") != nil)
  }

  @Test func aFailureIsReportedEveryTimeAndNeverKept() throws {
    let cache = AgentConfigCache()
    _ = try cache.config(files: [file], explicit: true)
    try FileManager.default.removeItem(atPath: file)
    #expect(throws: (any Error).self) { try cache.config(files: [file], explicit: true) }
    #expect(throws: (any Error).self) { try cache.config(files: [file], explicit: true) }
    try fileStoreConfig.write(toFile: file, atomically: true, encoding: .utf8)
    #expect(try cache.config(files: [file], explicit: true).account(named: "work") != nil)
  }
}
