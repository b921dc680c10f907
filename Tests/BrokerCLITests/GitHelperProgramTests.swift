@testable import BrokerCLI
import Testing

/// The helper value `setup-git` writes: this install's `git-credential-tokenbroker` by absolute
/// path (`InstalledProgram`), else `tokenbroker`.
@Suite struct GitHelperProgramTests {
  @Test func theInstallsOwnHelperBesideItsFront() throws {
    let t = try InstalledProgramTests.Tree()
    let core = try t.file("usr/libexec/tokenbroker/tokenbroker-core")
    let helper = try t.file("usr/bin/git-credential-tokenbroker")
    try t.file("usr/bin/tokenbroker")
    #expect(GitHelperProgram.helperValue(executable: core, path: nil) == helper)
  }

  @Test func byNameWhenNoneRuns() throws {
    let t = try InstalledProgramTests.Tree()
    let core = try t.file("usr/libexec/tokenbroker/tokenbroker-core")
    try t.file("usr/bin/tokenbroker")  // the front, but no helper link
    #expect(GitHelperProgram.helperValue(executable: core, path: nil) == "tokenbroker")
  }
}
