import Glibc

/// The `credential.https://HOST.helper` value `setup-git` writes: the absolute path of this
/// install's `git-credential-tokenbroker`, which git runs as it is (gitcredentials(7), "CUSTOM
/// HELPERS": an absolute path is used verbatim), where the value `tokenbroker` makes git start a
/// second git (`git credential-tokenbroker`) to find the program on `PATH` for every credential
/// it asks: a process start that costs more than tokenbroker's own answer (README, "Measured").
///
/// The program is looked for, in order: beside this install's front (`PREFIX/bin/`, for a core in
/// `PREFIX/libexec/tokenbroker/`, as `make install` and the package lay them out), beside this
/// program (a build tree with the link made), then on `PATH` (the link README's by-hand steps
/// make). The path is written as found, never with links resolved: the front serves git under the
/// name `git-credential-tokenbroker` only. Where none is found, or the path holds a character a
/// shell would read (git runs the value through `sh -c` with the action appended), the value is
/// `tokenbroker`, as before.
enum GitHelperProgram {
  static let name = "git-credential-tokenbroker"
  /// The value git runs `git-credential-tokenbroker` from `PATH` by.
  static let byName = "tokenbroker"

  /// - Parameters:
  ///   - executable: this program's file (`ProcessContext.executable`), or nil when unknown.
  ///   - path: the `PATH` variable.
  static func helperValue(executable: String?, path: String?) -> String {
    installed(name, executable: executable, path: path) ?? byName
  }

  /// The absolute path of this install's program `program` (`tokenbroker`, or the helper's
  /// name), looked for as above; nil when none is found or its path would need quoting.
  static func installed(_ program: String, executable: String?, path: String?) -> String? {
    var candidates: [String] = []
    if let executable, let dir = directory(of: executable) {
      let libexec = "/libexec/tokenbroker"
      if dir.hasSuffix(libexec) { candidates.append(String(dir.dropLast(libexec.count)) + "/bin/" + program) }
      candidates.append(dir + "/" + program)
    }
    for dir in (path ?? "").split(separator: ":") where dir.hasPrefix("/") {
      candidates.append(String(dir) + "/" + program)
    }
    guard let found = candidates.first(where: runs), isPlain(found) else { return nil }
    return found
  }

  /// Whether `value` is an absolute path git would run as it is.
  static func isAbsolutePath(_ value: String) -> Bool { value.hasPrefix("/") }

  /// Whether the file at `path` is there and executable by this user.
  static func runs(_ path: String) -> Bool { access(path, X_OK) == 0 }

  /// No character that `sh -c` would treat as more than a letter of the path.
  static func isPlain(_ path: String) -> Bool {
    path.utf8.allSatisfy { c in
      (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || "/._-+,:@".utf8.contains(c)
    }
  }

  private static func directory(of file: String) -> String? {
    guard file.hasPrefix("/"), let slash = file.lastIndex(of: "/") else { return nil }
    return String(file[..<slash])
  }
}
