import BrokerCore
import Foundation
import Testing

@testable import BrokerStore

@Suite("KeyFileEditor")
struct KeyFileEditorTests {
  let dir = TempDir()

  @Test func createsDirectoryAndFilePrivately() throws {
    let file = dir.path + "/config/tokenbroker/config"
    try KeyFileEditor.setGroup(file: file, group: "account work", entries: [("provider", "azure"), ("client-id", "x")])
    #expect(mode(of: dir.path + "/config") == 0o700)
    #expect(mode(of: dir.path + "/config/tokenbroker") == 0o700)
    #expect(mode(of: file) == 0o600)
    let raw = try KeyFileLoader.load(paths: [file], explicit: true)
    #expect(raw.groups.map(\.name) == ["account work"])
    #expect(raw.groups[0].entries.map { "\($0.key)=\($0.value)" } == ["provider=azure", "client-id=x"])
  }

  @Test func keepsCommentsAndOtherGroups() throws {
    let file = try dir.write(
      "config", "# top comment\n[broker]\n# store comment\nstore = file\n\n# work account\n[account work]\nprovider = azure\nclient-id = old\ntenant = common\n",
      mode: 0o640)
    try KeyFileEditor.setGroup(file: file, group: "account work", entries: [("provider", "azure"), ("client-id", "new")])
    try KeyFileEditor.setGroup(file: file, group: "account home", entries: [("provider", "google"), ("login-hint", " padded # x\\")])
    let text = try String(contentsOfFile: file, encoding: .utf8)
    #expect(text.contains("# top comment"))
    #expect(text.contains("# store comment"))
    #expect(text.contains("# work account"))
    #expect(!text.contains("tenant"))
    #expect(mode(of: file) == 0o640)
    let raw = try KeyFileLoader.load(paths: [file], explicit: true)
    #expect(raw.groups.map(\.name) == ["broker", "account work", "account home"])
    #expect(raw.groups[1].entries.map(\.value) == ["azure", "new"])
    #expect(raw.groups[2].entries.last?.value == " padded # x\\")

    #expect(try KeyFileEditor.removeGroup(file: file, group: "account work"))
    #expect(try !KeyFileEditor.removeGroup(file: file, group: "account work"))
    #expect(try !KeyFileEditor.removeGroup(file: dir.path + "/absent", group: "x"))
    let after = try KeyFileLoader.load(paths: [file], explicit: true)
    #expect(after.groups.map(\.name) == ["broker", "account home"])
    #expect(try String(contentsOfFile: file, encoding: .utf8).contains("# store comment"))
  }

  @Test func followsSymbolicLinks() throws {
    let target = try dir.write("real", "[broker]\nstore = file\n")
    let link = dir.path + "/link"
    symlink(target, link)
    try KeyFileEditor.setGroup(file: link, group: "broker", entries: [("store", "secret-service")])
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
    #expect(try String(contentsOfFile: target, encoding: .utf8).contains("store=secret-service"))
  }

  @Test func refusesToRewriteABrokenFile() throws {
    let file = try dir.write("bad", "no group here\n")
    #expect(throws: ConfigError.self) { try KeyFileEditor.setGroup(file: file, group: "broker", entries: [("a", "b")]) }
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "no group here\n")
  }
}
