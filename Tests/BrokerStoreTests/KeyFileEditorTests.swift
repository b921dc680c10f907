import BrokerCore
import Foundation
import Testing

@testable import BrokerStore

@Suite("KeyFileEditor")
struct KeyFileEditorTests {
  let dir = TempDir()

  @Test func createsDirectoryAndFilePrivately() throws {
    let file = dir.path + "/config/tokenbroker/config"
    var edit = try KeyFileEditor(file: file)
    edit.set(group: "account work", entries: [("provider", "azure"), ("client-id", "x")])
    try edit.write()
    #expect(mode(of: dir.path + "/config") == 0o700)
    #expect(mode(of: dir.path + "/config/tokenbroker") == 0o700)
    #expect(mode(of: file) == 0o600)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "[account work]\nprovider = azure\nclient-id = x\n")
  }

  @Test func setsKeysInPlaceAndKeepsEveryOtherLine() throws {
    let before = "# top comment\n[broker]\n# store comment\nstore=file\n\n# work account\n[account work]\nprovider=azure\nclient-id =  old  \ntenant=common\n"
    let file = try dir.write("config", before, mode: 0o640)
    var edit = try KeyFileEditor(file: file)
    edit.set(group: "account work", entries: [("provider", "azure"), ("client-id", "new"), ("scopes", "a b")])
    edit.set(group: "account home", entries: [("provider", "google"), ("login-hint", " padded # x\\")])
    let raw = try edit.result()
    #expect(raw.groups.map(\.name) == ["broker", "account work", "account home"])
    #expect(raw.groups[1].entries.map(\.value) == ["azure", "new", "common", "a b"])
    #expect(raw.groups[2].entries.last?.value == " padded # x\\")
    try edit.write()
    #expect(mode(of: file) == 0o640)
    #expect(
      try String(contentsOfFile: file, encoding: .utf8)
        == before.replacingOccurrences(of: "client-id =  old  ", with: "client-id =  new")
        + "scopes=a b\n\n[account home]\nprovider=google\nlogin-hint=\\spadded # x\\\\\n")
  }

  @Test func removesAGroupWithItsLeadingComment() throws {
    let file = try dir.write("config", "[broker]\nstore=file\n\n# work\n[account work]\nprovider=azure\n\n# free\n")
    var edit = try KeyFileEditor(file: file)
    let removed = edit.remove(group: "account work")
    let again = edit.remove(group: "account work")
    #expect(removed && !again)
    try edit.write()
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "[broker]\nstore=file\n\n# free\n")
  }

  @Test func followsSymbolicLinks() throws {
    let target = try dir.write("real", "[broker]\nstore = file\n")
    let link = dir.path + "/link"
    symlink(target, link)
    var edit = try KeyFileEditor(file: link)
    edit.set(group: "broker", entries: [("store", "secret-service")])
    try edit.write()
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "[broker]\nstore = secret-service\n")
  }

  @Test func refusesABrokenFileAndAFileChangedMeanwhile() throws {
    let file = try dir.write("bad", "no group here\n")
    #expect(throws: ConfigError.self) { try KeyFileEditor(file: file) }
    let other = try dir.write("other", "[broker]\n")
    var edit = try KeyFileEditor(file: other)
    edit.set(group: "broker", entries: [("a", "b")])
    _ = try dir.write("other", "[broker]\nc=d\n")
    #expect(throws: ConfigEditError.changed(file: other)) { try edit.write() }
    #expect(try String(contentsOfFile: other, encoding: .utf8) == "[broker]\nc=d\n")
  }
}
