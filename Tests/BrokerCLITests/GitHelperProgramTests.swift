@testable import BrokerCLI
import Foundation
import Testing

/// The helper value `setup-git` writes: this install's `git-credential-tokenbroker` by absolute path.
@Suite struct GitHelperProgramTests {
  /// A directory with `PREFIX/bin` and `PREFIX/libexec/tokenbroker` as `make install` lays them out.
  final class Tree {
    let root = NSTemporaryDirectory() + "tb-helper-\(UUID().uuidString)"
    init() throws { try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Makes an executable (or, with `mode`, another) file at `relative`; returns its path.
    @discardableResult func file(_ relative: String, mode: Int = 0o755) throws -> String {
      let path = root + "/" + relative
      try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\n".utf8))
      try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
      return path
    }
  }

  @Test func theInstallsOwnHelperBesideItsFront() throws {
    let t = try Tree()
    let core = try t.file("usr/libexec/tokenbroker/tokenbroker-core")
    let helper = try t.file("usr/bin/git-credential-tokenbroker")
    try t.file("elsewhere/git-credential-tokenbroker")
    #expect(GitHelperProgram.helperValue(executable: core, path: t.root + "/elsewhere") == helper)
  }

  @Test func aBuildTreeUsesTheLinkBesideItThenTheOneOnPATH() throws {
    let t = try Tree()
    let core = try t.file("build/tokenbroker-core")
    let onPath = try t.file("home/bin/git-credential-tokenbroker")
    #expect(GitHelperProgram.helperValue(executable: core, path: "relative/bin:" + t.root + "/home/bin") == onPath)
    let beside = try t.file("build/git-credential-tokenbroker")
    #expect(GitHelperProgram.helperValue(executable: core, path: t.root + "/home/bin") == beside)
  }

  @Test func byNameWhenNoneRunsOrThePathNeedsQuoting() throws {
    let t = try Tree()
    let core = try t.file("usr/libexec/tokenbroker/tokenbroker-core")
    try t.file("usr/bin/git-credential-tokenbroker", mode: 0o644)  // not executable
    #expect(GitHelperProgram.helperValue(executable: core, path: nil) == "tokenbroker")
    #expect(GitHelperProgram.helperValue(executable: nil, path: "bin:.") == "tokenbroker")
    try t.file("my tools/git-credential-tokenbroker")
    #expect(GitHelperProgram.helperValue(executable: nil, path: t.root + "/my tools") == "tokenbroker")
    #expect(!GitHelperProgram.isPlain("/opt/$HOME/git-credential-tokenbroker"))
    #expect(GitHelperProgram.isPlain("/opt/tb-1.2+x/bin/git-credential-tokenbroker"))
  }
}
