@testable import BrokerCLI
import Foundation
import Testing

/// This install's programs by absolute path: `setup-git`'s helper value and `mail setup`'s
/// password commands.
@Suite struct InstalledProgramTests {
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

  @Test func theInstallsOwnProgramBesideItsFront() throws {
    let t = try Tree()
    let core = try t.file("usr/libexec/tokenbroker/tokenbroker-core")
    let front = try t.file("usr/bin/tokenbroker")
    try t.file("elsewhere/tokenbroker")
    #expect(InstalledProgram.path(of: "tokenbroker", executable: core, path: t.root + "/elsewhere") == front)
  }

  @Test func aBuildTreeUsesTheProgramBesideItThenTheOneOnPATH() throws {
    let t = try Tree()
    let core = try t.file("build/tokenbroker-core")
    let onPath = try t.file("home/bin/tokenbroker")
    #expect(InstalledProgram.path(of: "tokenbroker", executable: core, path: "relative/bin:" + t.root + "/home/bin") == onPath)
    let beside = try t.file("build/tokenbroker")
    #expect(InstalledProgram.path(of: "tokenbroker", executable: core, path: t.root + "/home/bin") == beside)
  }

  @Test func noneWhenNoneRunsOrThePathNeedsQuoting() throws {
    let t = try Tree()
    let core = try t.file("usr/libexec/tokenbroker/tokenbroker-core")
    try t.file("usr/bin/tokenbroker", mode: 0o644)  // not executable
    #expect(InstalledProgram.path(of: "tokenbroker", executable: core, path: nil) == nil)
    #expect(InstalledProgram.path(of: "tokenbroker", executable: nil, path: "bin:.") == nil)
    try t.file("my tools/tokenbroker")
    #expect(InstalledProgram.path(of: "tokenbroker", executable: nil, path: t.root + "/my tools") == nil)
    #expect(!InstalledProgram.isPlain("/opt/$HOME/tokenbroker"))
    #expect(InstalledProgram.isPlain("/opt/tb-1.2+x/bin/git-credential-tokenbroker"))
  }
}
