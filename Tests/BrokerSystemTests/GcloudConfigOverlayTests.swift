import BrokerSystem
import Foundation
import Testing

/// exec's private gcloud config directory (bug-cases-3.md X10).
@Suite struct GcloudConfigOverlayTests {
  static func scratch() -> String {
    let path = NSTemporaryDirectory() + "tb-gcloud-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  @Test func test_X10_copiesTheActiveConfigurationWithoutItsAccountAndRemovesEverything() throws {
    let user = Self.scratch()
    let runtime = Self.scratch()
    defer {
      try? FileManager.default.removeItem(atPath: user)
      try? FileManager.default.removeItem(atPath: runtime)
    }
    try FileManager.default.createDirectory(atPath: user + "/configurations", withIntermediateDirectories: true)
    try "work\n".write(toFile: user + "/active_config", atomically: true, encoding: .utf8)
    try "[core]\naccount = me@example.test\nproject = mine\n[compute]\naccount = kept\nregion = europe-west1\n"
      .write(toFile: user + "/configurations/config_work", atomically: true, encoding: .utf8)
    try "False".write(toFile: user + "/gce", atomically: true, encoding: .utf8)

    let overlay = try GcloudConfigOverlay.create(runtimeDirectory: runtime, environment: ["CLOUDSDK_CONFIG": user])
    #expect(overlay.directory.hasPrefix(runtime + "/gcloud-"))
    #expect(try String(contentsOfFile: overlay.directory + "/active_config", encoding: .utf8) == "work")
    #expect(
      try String(contentsOfFile: overlay.directory + "/configurations/config_work", encoding: .utf8)
        == "[core]\nproject = mine\n[compute]\naccount = kept\nregion = europe-west1\n")
    #expect(!FileManager.default.fileExists(atPath: overlay.directory + "/gce"))
    let attributes = try FileManager.default.attributesOfItem(atPath: overlay.directory)
    #expect((attributes[.posixPermissions] as? Int) == 0o700)

    // What gcloud writes there goes with it.
    try FileManager.default.createDirectory(atPath: overlay.directory + "/logs/2026.12.02", withIntermediateDirectories: true)
    try "x".write(toFile: overlay.directory + "/logs/2026.12.02/a.log", atomically: true, encoding: .utf8)
    try FileManager.default.createSymbolicLink(atPath: overlay.directory + "/link", withDestinationPath: user)
    overlay.remove()
    #expect(!FileManager.default.fileExists(atPath: overlay.directory))
    #expect(FileManager.default.fileExists(atPath: user + "/gce"))  // a link is removed, not followed
  }

  @Test func test_X10_withoutAUserConfigurationTheDirectoryIsEmpty() throws {
    let runtime = Self.scratch()
    defer { try? FileManager.default.removeItem(atPath: runtime) }
    let overlay = try GcloudConfigOverlay.create(runtimeDirectory: runtime, environment: ["HOME": runtime + "/nohome"])
    #expect(try FileManager.default.contentsOfDirectory(atPath: overlay.directory).isEmpty)
    overlay.remove()
  }
}
