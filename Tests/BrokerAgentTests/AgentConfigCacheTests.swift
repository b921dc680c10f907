import BrokerAgent
import BrokerStore
import BrokerCore
import Foundation
import Testing

/// The agent's config is the config as it is now: any change to a file's bytes is seen by the
/// next request, also one that keeps the size and lands within the same clock tick.
@Suite struct AgentConfigCacheTests {
  let h: ConfigHome
  var file: String { h.directory + "/config/tokenbroker/config" }
  init() throws { h = try ConfigHome(config: fileStoreConfig) }

  /// A revision changes exactly when the config was parsed anew.
  @Test func everyEditIsSeenAndAnUnchangedFileIsNotParsedAgain() throws {
    let cache = AgentConfigCache()
    let first = try cache.current(files: [file], explicit: true)
    #expect(first.config.account(named: "work") != nil)
    let again = try cache.current(files: [file], explicit: true)
    #expect(again.revision == first.revision)
    #expect(again.config == first.config)
    // Same length, same instant: only the bytes differ.
    try fileStoreConfig.replacingOccurrences(of: "[account work]", with: "[account wxrk]")
      .write(toFile: file, atomically: false, encoding: .utf8)
    let edited = try cache.current(files: [file], explicit: true)
    #expect(edited.revision != first.revision)
    #expect(edited.config.account(named: "work") == nil)
    #expect(edited.config.account(named: "wxrk") != nil)
    #expect(try cache.current(files: [file], explicit: true).revision == edited.revision)
    // Other files are another config, even with the same bytes.
    let copy = h.directory + "/copy"
    try fileStoreConfig.write(toFile: copy, atomically: true, encoding: .utf8)
    #expect(try cache.current(files: [copy], explicit: true).revision != edited.revision)
  }

  /// A file past the bytes compared is parsed anew each time: an edit after its first MiB (here
  /// of comments) is seen too.
  @Test func anEditPastTheComparedBytesIsSeen() throws {
    let cache = AgentConfigCache()
    let padding = String(repeating: "# " + String(repeating: "x", count: 76) + "\n", count: 1 << 14)
    try (padding + fileStoreConfig).write(toFile: file, atomically: false, encoding: .utf8)
    let first = try cache.current(files: [file], explicit: true)
    #expect(first.config.account(named: "work") != nil)
    #expect(try cache.current(files: [file], explicit: true).revision != first.revision)  // parsed anew
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
    let before = try cache.current(files: [file], explicit: true)
    try FileManager.default.removeItem(atPath: file)
    #expect(throws: (any Error).self) { try cache.config(files: [file], explicit: true) }
    #expect(throws: (any Error).self) { try cache.config(files: [file], explicit: true) }
    // The bytes of before the failure again: the parse kept from then serves (nothing new kept).
    try fileStoreConfig.write(toFile: file, atomically: true, encoding: .utf8)
    let after = try cache.current(files: [file], explicit: true)
    #expect(after.config.account(named: "work") != nil)
    #expect(after.revision == before.revision)
  }
}

/// Which cached tokens a new config makes stale (`AgentConfigCache.stale`).
@Suite struct AgentConfigStaleTokensTests {
  func parse(_ text: String) throws -> BrokerConfig {
    let raw = try KeyFileLoader.load(paths: ["/f"], contents: [Array(text.utf8)], errors: [0], explicit: true)
    return try ConfigParser.parse(raw)
  }

  @Test func anotherStoreMakesEveryTokenStale() throws {
    let before = try parse(fileStoreConfig)
    let after = try parse(fileStoreConfig.replacingOccurrences(of: "store = file", with: "store = secret-service"))
    #expect(AgentConfigCache.stale(before: before, after: after) == .all)
    #expect(AgentConfigCache.stale(before: nil, after: after) == .none)
    #expect(AgentConfigCache.stale(before: before, after: before) == .none)
  }

  /// The accounts derived from a stale one (SharePoint `via`) go with it when it is dropped
  /// (`AccountDrop`), not by being listed here.
  @Test func aRedefinedAccountIsStale() throws {
    let two = fileStoreConfig + "\n[account site]\nprovider = sharepoint\nsite = https://contoso.sharepoint.com\nvia = work\n"
    let before = try parse(two)
    let retargeted = try parse(two.replacingOccurrences(of: "client-id = cid", with: "client-id = other"))
    #expect(AgentConfigCache.stale(before: before, after: retargeted) == .accounts(["work"]))
    let refresh = try parse(two.replacingOccurrences(of: "store = file", with: "store = file\nrefresh-margin = 60"))
    #expect(AgentConfigCache.stale(before: before, after: refresh) == .none)
  }
}
