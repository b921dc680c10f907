/// The `credential.https://HOST.helper` value `setup-git` writes: the absolute path of this
/// install's `git-credential-tokenbroker` (`InstalledProgram`), which git runs as it is
/// (gitcredentials(7), "CUSTOM HELPERS": an absolute path is used verbatim), where the value
/// `tokenbroker` makes git start a second git (`git credential-tokenbroker`) to find the program
/// on `PATH` for every credential it asks: a process start that costs more than tokenbroker's own
/// answer (README, "Measured"). Where none is found, or its path would need quoting, the value is
/// `tokenbroker`, as before.
enum GitHelperProgram {
  static let name = "git-credential-tokenbroker"
  /// The value git runs `git-credential-tokenbroker` from `PATH` by.
  static let byName = "tokenbroker"

  /// - Parameters:
  ///   - executable: this program's file (`ProcessContext.executable`), or nil when unknown.
  ///   - path: the `PATH` variable.
  static func helperValue(executable: String?, path: String?) -> String {
    InstalledProgram.path(of: name, executable: executable, path: path) ?? byName
  }
}
